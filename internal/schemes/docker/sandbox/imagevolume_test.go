package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/api/types/image"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// volumeImage builds, from the test image, an image that declares VOLUME dirs (owned by nobody,
// as an image made for its own user has them), removed at the end of the test.
func volumeImage(t *testing.T, eng *engine.Client, dirs ...string) string {
	t.Helper()
	df := "RUN mkdir -p " + strings.Join(dirs, " ") + " && chown 65534:65534 " + strings.Join(dirs, " ") + "\n"
	for _, d := range dirs {
		df += "VOLUME " + d + "\n"
	}
	return derivedImage(t, eng, "volume", df)
}

// derivedImage builds, from the test image, an image with the Dockerfile lines df (no network),
// removed at the end of the test.
func derivedImage(t *testing.T, eng *engine.Client, name, df string) string {
	t.Helper()
	return derivedImageWith(t, eng, name, df, nil)
}

// derivedImageWith is derivedImage with files in the build's context (name there -> contents).
func derivedImageWith(t testing.TB, eng *engine.Client, name, df string, files map[string][]byte) string {
	t.Helper()
	tag := "mcpsandbox-test-" + name + ":" + randHex(6)
	df = "FROM " + testImage() + "\n" + df
	var ctxTar bytes.Buffer
	tw := tar.NewWriter(&ctxTar)
	tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))})
	io.WriteString(tw, df)
	for n, b := range files {
		tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(b))})
		tw.Write(b)
	}
	tw.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	resp, err := eng.API.ImageBuild(ctx, &ctxTar, build.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, NetworkMode: "none"})
	if err != nil {
		t.Fatalf("build an image with %q: %v", df, err)
	}
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Cleanup(func() {
		eng.API.ImageRemove(context.Background(), tag, image.RemoveOptions{Force: true, PruneChildren: true})
	})
	if _, ok, err := eng.ImagePresent(ctx, tag); err != nil || !ok {
		t.Fatalf("the image with %q was not built (%v): %s", df, err, out)
	}
	return tag
}

// TestImageVolumeIsNoWayOntoTheDisk: an image that declares a VOLUME got an anonymous volume
// on the engine's disk, writable whatever docker.read_only says and outside the /tmp tmpfs's
// size: a call wrote 200 MB there (more with time: the disk's size is the bound), and --check
// still said "root filesystem read-only". Each image volume is now a size-capped tmpfs, as /tmp
// is; a nested one (/tmp/cache) too.
func TestImageVolumeIsNoWayOntoTheDisk(t *testing.T) {
	eng := needEngine(t)
	img := volumeImage(t, eng, "/data", "/tmp/cache")
	e := newExec(t, eng, testPolicy(func(p *policy.Policy) {
		dksec.Of(p).Image = img
		p.Limits.Memory = 512 << 20 // room for more than the tmpfs's size: the bound must be the tmpfs's
		p.Limits.Timeout = policy.Duration{Duration: 60 * time.Second}
	}))
	for _, dir := range []string{"/data", "/tmp/cache"} {
		// Four files of 60 MB: each under the fsize limit (64 MiB), together past the tmpfs's.
		res := mustCall(t, e, ToolShell, map[string]any{"script": "for i in 1 2 3 4; do head -c 60000000 /dev/zero > " + dir + "/f$i 2>/dev/null; done; " +
			"cat " + dir + "/f* | wc -c; grep ' " + dir + " ' /proc/mounts"})
		lines := strings.SplitN(res.Stdout, "\n", 2)
		n, _ := strconv.Atoi(strings.TrimSpace(lines[0]))
		if n > tmpfsBytes || !strings.Contains(res.Stdout, "tmpfs") {
			t.Errorf("VOLUME %s: a call wrote %d bytes there (the /tmp tmpfs holds %d); its mount: %q", dir, n, tmpfsBytes, strings.TrimSpace(lines[len(lines)-1]))
		}
	}
	for _, l := range e.Layers() {
		if l.Name == LayerReadOnlyRoot && !l.Active {
			t.Errorf("the read-only layer is off: %+v", l)
		}
	}
}
