package sandbox

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The image's loader variables are cleaned of every entry a call can write, whichever variable
// glibc reads it from, and of relative ones (the working directory is the workspace); what is
// left is kept, and a variable with nothing to remove is not set again.
func TestLoaderEnvOf(t *testing.T) {
	s := spec{imageVolumes: []string{"/data/"}}
	env, note := loaderEnvOf([]string{
		"PATH=/usr/bin:/workspace/bin", // the entrypoint's, not the loader's
		"LD_PRELOAD=/workspace/evil.so  libjemalloc.so.2 lib/x.so /usr/lib/ok.so",
		"LD_LIBRARY_PATH=/opt/lib:;/tmp/l:/opt/../workspace/l::/data/l:/dev/shm",
		"LD_AUDIT=/proc/self/cwd/a.so",
		"GCONV_PATH=/usr/lib/gconv:",
		"LOCPATH=/usr/share/locale",
		"LD_ORIGIN_PATH=.",
		"TZDIR=",
		"LD_DEBUG_OUTPUT=/workspace/dbg",
		"LD_BIND_NOW=1",
	}, s.loaderMounts())
	want := []string{
		"GCONV_PATH=/usr/lib/gconv",
		"LD_AUDIT=",
		"LD_DEBUG_OUTPUT=",
		"LD_LIBRARY_PATH=/opt/lib",
		"LD_ORIGIN_PATH=",
		"LD_PRELOAD=libjemalloc.so.2:/usr/lib/ok.so",
	}
	if !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
	for _, w := range []string{
		"LD_PRELOAD: /workspace/evil.so (under the mount /workspace), \"lib/x.so\" (relative",
		`LD_LIBRARY_PATH: "" (relative: the working directory), /tmp/l (under the mount /tmp), /opt/../workspace/l (has ..`,
		"/data/l (under the mount /data)", "/dev/shm (under the mount /dev)",
		"LD_AUDIT: /proc/self/cwd/a.so (under the mount /proc)",
		`GCONV_PATH: "" (relative`, `LD_ORIGIN_PATH: "." (relative`,
	} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q does not say %q", note, w)
		}
	}
	if env, note := loaderEnvOf([]string{"LD_LIBRARY_PATH=/opt/lib:/usr/local/lib", "LD_PRELOAD=libfoo.so"}, s.loaderMounts()); env != nil || note != "" {
		t.Errorf("clean values rewritten: %q %q", env, note)
	}
}

// musl's loader splits LD_PRELOAD on any isspace and ':', and LD_LIBRARY_PATH on ':' and '\n':
// an entry behind a tab or a newline was one "absolute" entry to glibc's separators and was kept,
// and an Alpine image's loader loaded the workspace's library (atk49b, theory). Every entry either
// loader sees is judged now, musl's MUSL_LOCPATH too.
func TestLoaderEnvMuslSeparators(t *testing.T) {
	s := spec{}
	env, note := loaderEnvOf([]string{
		"LD_PRELOAD=/usr/lib/ok.so\t/workspace/x.so\n/tmp/y.so\v/workspace/v.so\f/workspace/f.so\r/workspace/r.so",
		"LD_LIBRARY_PATH=/usr/lib\n/workspace/lib",
		"MUSL_LOCPATH=/usr/share/i18n:/workspace/loc",
	}, s.loaderMounts())
	want := []string{"LD_LIBRARY_PATH=/usr/lib", "LD_PRELOAD=/usr/lib/ok.so", "MUSL_LOCPATH=/usr/share/i18n"}
	if !slices.Equal(env, want) {
		t.Errorf("env %q, want %q", env, want)
	}
	for _, w := range []string{"/workspace/x.so (under", "/tmp/y.so (under", "/workspace/v.so (under", "/workspace/f.so (under", "/workspace/r.so (under", "LD_LIBRARY_PATH: /workspace/lib (under", "MUSL_LOCPATH: /workspace/loc (under"} {
		if !strings.Contains(note, w) {
			t.Errorf("note %q does not say %q", note, w)
		}
	}
}

// evilC is a library that leaves a mark in the workspace from every process that loads it
// (ran-soTAG-PID, TAG set when it is built).
const evilC = `#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
	char p[64];
	snprintf(p, sizeof p, "/workspace/ran-so" TAG "-%d", (int)getpid());
	int fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0666);
	if (fd >= 0) close(fd);
}
`

// The image's LD_PRELOAD and LD_LIBRARY_PATH acted in the loader of /bin/sh as pid 1 (and of the
// watchdog's and wrapper's python3) before any of serve's code: one naming the workspace, or an
// empty entry (the working directory, the workspace), loaded a library a call wrote there
// (fix48-g). The image here names the workspace's evil1.so in LD_PRELOAD, and preloads evil2.so
// by name where its LD_LIBRARY_PATH ends in an empty entry; a call planted both. Neither loads
// in any process of the container (a session's is built alike: spec.build), the program sees
// the cleaned values, and serve's log says what was removed.
func TestLoaderEnvTakesNoWorkspaceLibrary(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("no C compiler to build the planted library")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "evil.c"), []byte(evilC), 0o644)
	var libs [2][]byte
	for i := range libs {
		so := filepath.Join(dir, "evil.so")
		if out, err := exec.Command(cc, "-shared", "-fPIC", "-O0", fmt.Sprintf("-DTAG=\"%d\"", i+1), "-o", so, filepath.Join(dir, "evil.c")).CombinedOutput(); err != nil {
			t.Skipf("cannot build the planted library: %v %s", err, out)
		}
		if libs[i], err = os.ReadFile(so); err != nil {
			t.Fatal(err)
		}
	}
	eng := needEngine(t)
	img := derivedImage(t, eng, "ldenv", "ENV LD_PRELOAD=\"/workspace/evil1.so mcpsandbox-evil2.so\" LD_LIBRARY_PATH=/opt/lib:\n")
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	os.Chown(ws, 65534, 65534)
	plantFile(t, ws, "evil1.so", libs[0])
	plantFile(t, ws, "mcpsandbox-evil2.so", libs[1])
	var logs bytes.Buffer
	e := newExecOpts(t, testPolicy(func(p *policy.Policy) {
		dksec.Of(p).Image, dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = img, ws, true
	}), Options{Engine: eng, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	const prog = "import os\nprint(repr(os.environ.get('LD_PRELOAD')), repr(os.environ.get('LD_LIBRARY_PATH')))\n"
	const want = "'mcpsandbox-evil2.so' '/opt/lib'\n"
	res := mustCall(t, e, ToolPython, py(prog))
	if m := planted(ws); len(m) > 0 {
		t.Fatalf("a library in the workspace was loaded by %v (ran-soTAG-PID: pid 1 is -1, evil2.so found through the empty entry is so2); the call said %q %q", m, res.Stdout, res.Stderr)
	}
	if res.Stdout != want || res.ExitCode != 0 {
		t.Fatalf("stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, want)
	}
	for _, w := range []string{"/workspace/evil1.so (under the mount /workspace)", `LD_LIBRARY_PATH: \"\" (relative`} {
		if !strings.Contains(logs.String(), w) {
			t.Errorf("serve's log %q does not say %q", logs.String(), w)
		}
	}
}
