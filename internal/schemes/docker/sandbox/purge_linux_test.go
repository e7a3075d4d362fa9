package sandbox

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A layer directory serve could not remove (trial37 F4: root's work/work, mode 0, with a
// whiteout in it) is emptied through the engine and removed; one the engine cannot empty either
// (here: the image is not there) stays, and serve's log names it with the command that removes
// it. TestDockerNonRootLayersLeaveNothing (e2e) runs serve as a user in the docker group.
func TestLayerPurge(t *testing.T) {
	eng := needEngine(t)
	leftover := func() string {
		dir := filepath.Join(t.TempDir(), "call-1-1")
		ww := filepath.Join(dir, "work", "work")
		if err := os.MkdirAll(ww, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mknod(filepath.Join(ww, "#3dc84"), syscall.S_IFCHR, 0); err != nil {
			t.Fatal(err)
		}
		os.Chmod(ww, 0)
		return dir
	}
	for _, c := range []struct {
		name, image string
		gone        bool
	}{{"emptied", testImage(), true}, {"image-missing", "mcpsandbox-no-such-image:purge", false}} {
		t.Run(c.name, func(t *testing.T) {
			var log bytes.Buffer
			e := &Executor{eng: eng, me: self(), spec: spec{image: c.image}, log: slog.New(slog.NewTextHandler(&log, nil))}
			dir := leftover()
			e.purgeNow(dir)
			_, err := os.Lstat(dir)
			if gone := os.IsNotExist(err); gone != c.gone {
				t.Fatalf("%s gone: %v, want %v; log:\n%s", dir, gone, c.gone, log.String())
			}
			if want := "remove them with: sudo rm -rf " + dir; !c.gone && !strings.Contains(log.String(), want) {
				t.Errorf("log does not say %q:\n%s", want, log.String())
			}
		})
	}
}
