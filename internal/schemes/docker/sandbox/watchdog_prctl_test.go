package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// ctypesImage is the test image with Python's ctypes added, as the official python images have
// it (the test image, Debian's python3-minimal, has none): the host's Debian 3.11 stdlib files
// (.ci/run installs libpython3.11-stdlib), the interpreter's own version. Removed at the test's end.
func ctypesImage(t testing.TB, eng *engine.Client) string {
	t.Helper()
	files := ctypesFiles(t, nil)
	if files == nil {
		return ""
	}
	return derivedImageWith(t, eng, "ctypes", "COPY usr/ /usr/\nRUN python3 -I -S -c 'import ctypes; ctypes.CDLL(None).prctl'\n", files)
}

// ctypesFiles adds to files (a build context's, nil for a new one) the host's Debian 3.11 ctypes,
// or skips the test (nil) where the host has none.
func ctypesFiles(t testing.TB, files map[string][]byte) map[string][]byte {
	t.Helper()
	const lib = "/usr/lib/python3.11"
	py, _ := filepath.Glob(lib + "/ctypes/*.py")
	so, _ := filepath.Glob(lib + "/lib-dynload/_ctypes.cpython-311-*.so")
	if len(py) == 0 || len(so) != 1 {
		testenv.Skip(t, "docker tests with ctypes: no Debian python 3.11 ctypes on this host (%s): apt-get install libpython3.11-stdlib", lib)
		return nil
	}
	if files == nil {
		files = map[string][]byte{}
	}
	for _, f := range append(py, so...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		files[strings.TrimPrefix(f, "/")] = b
	}
	return files
}

// smallCtypes is a policy on the ctypes image at the smallest memory a policy may set: no room
// for the interpreter's copy, so prctl through ctypes is the only way pid 1 is out of reach.
func smallCtypes(img string) *policy.Policy {
	return testPolicy(func(p *policy.Policy) {
		dksec.Of(p).Image = img
		p.Limits.Memory = 16 << 20
	})
}

// Where the image's Python has ctypes (the official python images: their interpreter finds
// libpython by $ORIGIN, so the copy is never made there, atk45c F1) the watchdog makes itself
// non-dumpable with prctl(PR_SET_DUMPABLE, 0): no copy, no second interpreter start. Here the
// copy has no room either: prctl alone keeps the program from pid 1's fd 0 and memory, and the
// container ends when its stream closes.
func TestWatchdogPrctlWithCtypes(t *testing.T) {
	eng := needEngine(t)
	img := ctypesImage(t, eng)
	e := newExec(t, eng, smallCtypes(img))
	b, id := startWatched(t, e, eng.API)
	script := "(python3 -c '" + holdStdinPy + "' </dev/null &)\nsleep 300"
	fmt.Fprintf(b.hj.Conn, "shell 120000 %d\n%s", len(script), script)
	if err := b.awaitLine("reached-nothing\n", 20*time.Second); err != nil {
		t.Fatal(err)
	}
	endsSoon(t, eng.API, b, id)
	if b.pid1 != "prctl" {
		t.Fatalf("pid 1 says %q, want prctl", b.pid1)
	}
}

// The session's form: the supervisor, which reads the attached stdin, makes itself non-dumpable
// as its first act (the wrapper runs from the image's interpreter, dumpable again after exec).
// At the default memory: the attack's interpreters beside the session's do not fit in 16MiB.
func TestSessionSupervisorPrctlWithCtypes(t *testing.T) {
	eng := needEngine(t)
	img := ctypesImage(t, eng)
	sessionHoldThenClose(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).Image = img }))
}

// Where neither way works (no ctypes, no room for the copy) pid 1 stays reachable, and serve says
// so once on its log with why; the program does reach it there (the report's negative control:
// the attack that the tests above see fail succeeds).
func TestWatchdogReachableIsSaid(t *testing.T) {
	eng := needEngine(t)
	log := &testenv.LockedBuffer{}
	e := newExecOpts(t, testPolicy(func(p *policy.Policy) { p.Limits.Memory = 16 << 20 }), Options{Engine: eng, Logger: slog.New(slog.NewTextHandler(log, nil))})
	b, _ := startWatched(t, e, eng.API)
	if want := "reachable (no ctypes; no copy: no room for the copy)"; e.Pid1() != want {
		t.Fatalf("pid 1 says %q, want %q", e.Pid1(), want)
	}
	if !strings.Contains(log.String(), "within the program's reach") || !strings.Contains(log.String(), "no room for the copy") {
		t.Fatalf("serve's log does not say pid 1 is reachable:\n%s", log.String())
	}
	if l := layerNamed(t, e, LayerInit); l.Active || !strings.Contains(l.Detail, "can reach it through /proc: reachable (no ctypes") {
		t.Fatalf("--check's init layer: %+v", l)
	}
	script := "python3 -c '" + holdStdinPy + "' </dev/null"
	fmt.Fprintf(b.hj.Conn, "shell 120000 %d\n%s", len(script), script)
	if err := b.awaitLine("REACHED /proc/1/fd/0 /proc/1/mem", 20*time.Second); err != nil {
		t.Fatal(err)
	}
}

// With room for the copy (the test image's default memory) it is made, and said.
func TestWatchdogCopyIsSaid(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	if l := layerNamed(t, e, LayerInit); !l.Active || !strings.Contains(l.Detail, "non-dumpable by a copy of its interpreter") {
		t.Fatalf("--check's init layer, measured in a container it starts: %+v", l)
	}
	if e.Pid1() != "copy" {
		t.Fatalf("pid 1 says %q, want copy", e.Pid1())
	}
}
