package sandbox

import (
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// atk47b F1's plants, each a workspace's sitecustomize.py where the image's PYTHONPATH names the
// workspace. holdSite opens its process's own attached stdin for writing and hands it to a
// daemon; fakeCtypesSite makes the wrapper's prctl a no-op that says it worked; forgeSite rewrites
// the pid 1 report to "prctl".
const (
	holdSite = `import os
try:
    fd = os.open("/proc/self/fd/0", os.O_WRONLY | os.O_NONBLOCK)
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            import signal, time
            for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
                signal.signal(s, signal.SIG_IGN)
            n = os.open("/dev/null", os.O_RDWR)
            for i in (0, 1, 2, 3):
                os.dup2(n, i)
            while True:
                time.sleep(1)
        os._exit(0)
    os.wait()
    os.close(fd)
except OSError:
    pass
`
	fakeCtypesSite = `import sys, types
m = types.ModuleType("ctypes")
class _L:
    def __getattr__(self, n):
        return lambda *a: 0
m.CDLL = lambda *a, **k: _L()
sys.modules["ctypes"] = m
`
	forgeSite = `import os
_w = os.write
def write(fd, b):
    if fd == 2 and isinstance(b, bytes) and b"mcpsandbox-pid1:" in b:
        b = b"mcpsandbox-pid1:prctl\n" + b[b.index(b"mcpsandbox-ready:"):]
    return _w(fd, b)
os.write = write
`
)

// sitePathImage is the test image (with Debian's ctypes when withCtypes, as ctypesImage) whose
// environment puts the workspace on Python's path, and whose site-packages hold a module and a
// .pth naming another directory, with PYTHONUNBUFFERED set: as an image with an editable install
// and the usual ENV lines has it.
func sitePathImage(t *testing.T, eng *engine.Client, withCtypes bool) string {
	t.Helper()
	files := map[string][]byte{
		"usr/local/lib/python3.11/dist-packages/imgmod.py": []byte("V = 'img'\n"),
		"usr/local/lib/python3.11/dist-packages/extra.pth": []byte("/opt/extra\n"),
		"opt/extra/extramod.py":                            []byte("V = 'extra'\n"),
	}
	if withCtypes && ctypesFiles(t, files) == nil {
		return ""
	}
	return derivedImageWith(t, eng, "sitepath", "COPY usr/ /usr/\nCOPY opt/ /opt/\nENV PYTHONPATH=/workspace PYTHONUNBUFFERED=1\n", files)
}

// siteWorkspace is a workspace holding mymod.py and, unless site is "", sitecustomize.py = site.
func siteWorkspace(t *testing.T, site string) string {
	t.Helper()
	ws := t.TempDir()
	os.Chmod(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "mymod.py"), []byte("V = 'ws'\n"), 0o644)
	if site != "" {
		os.WriteFile(filepath.Join(ws, "sitecustomize.py"), []byte(site), 0o644)
	}
	exec.Command("chown", "-R", "65534:65534", ws).Run()
	return ws
}

// The wrapper ran the image's Python start-up (PYTHONPATH, site: sitecustomize, usercustomize,
// .pth) before its prctl, its probe and its report, in the process that holds the attached stdin
// (atk47b F1): with PYTHONPATH=/workspace a workspace's sitecustomize.py held a session container
// past its stream's close, left the supervisor dumpable, and forged "prctl" where pid 1 was
// reachable. The wrapper starts with -I -S now: each plant either leaves the container ending when
// its stream closes, or is reported reachable.
func TestWrapperStartRunsNoSite(t *testing.T) {
	eng := needEngine(t)
	img := sitePathImage(t, eng, true)
	for _, c := range []struct{ name, site string }{{"hold", holdSite}, {"fake-ctypes", fakeCtypesSite}} {
		t.Run(c.name, func(t *testing.T) {
			ws := siteWorkspace(t, c.site)
			sessionHoldThenClose(t, eng, sessionPolicy(func(p *policy.Policy) {
				dksec.Of(p).Image, dksec.Of(p).Workspace = img, ws
			}))
		})
	}
	t.Run("forge", func(t *testing.T) {
		// No ctypes and no room for the copy: pid 1 is reachable, which the report must say.
		plain := sitePathImage(t, eng, false)
		e := newExec(t, eng, testPolicy(func(p *policy.Policy) {
			dksec.Of(p).Image, dksec.Of(p).Workspace = plain, siteWorkspace(t, forgeSite)
			p.Limits.Memory = 16 << 20
		}))
		b, _ := startWatched(t, e, eng.API)
		if !strings.HasPrefix(b.pid1, "reachable") || !strings.HasPrefix(e.Pid1(), "reachable") {
			t.Fatalf("pid 1 is reachable here (no ctypes, no room for the copy), but the container says %q and the executor %q", b.pid1, e.Pid1())
		}
	})
}

// A program's Python environment is still the image's (programEnvPy): its imports from the
// workspace (PYTHONPATH and -c's ""), from the image's site-packages and a .pth there, and
// PYTHONUNBUFFERED (its print comes before its child's line), per call, pooled and in a session.
// A workspace's sitecustomize.py that exits (atk47b F2) no longer keeps containers from starting:
// a shell call runs, in this executor and the next.
func TestProgramKeepsImagePythonEnv(t *testing.T) {
	eng := needEngine(t)
	img := sitePathImage(t, eng, false)
	ws := siteWorkspace(t, "")
	const prog = "import mymod, imgmod, extramod, subprocess, sys\nprint(mymod.V, imgmod.V, extramod.V, sys.path[0] == '')\nsubprocess.run(['echo', 'child'])\n"
	const want = "ws img extra True\nchild\n"
	on := func(p *policy.Policy) { dksec.Of(p).Image, dksec.Of(p).Workspace = img, ws }
	for name, e := range map[string]*Executor{
		"per-call": newExec(t, eng, testPolicy(on)),
		"pooled":   newExec(t, eng, testPolicy(on, func(p *policy.Policy) { dksec.Of(p).Pool = 1 })),
	} {
		if res := mustCall(t, e, ToolPython, py(prog)); res.Stdout != want || res.ExitCode != 0 {
			t.Errorf("%s: stdout %q exit %d stderr %q, want %q", name, res.Stdout, res.ExitCode, res.Stderr, want)
		}
	}
	se := newExec(t, eng, sessionPolicy(on))
	if res := mustIn(t, se, "A", ToolPython, py(prog)); res.Stdout != want || res.ExitCode != 0 {
		t.Errorf("session: stdout %q exit %d stderr %q, want %q", res.Stdout, res.ExitCode, res.Stderr, want)
	}
	brick := siteWorkspace(t, "import os\nos._exit(0)\n")
	pol := testPolicy(func(p *policy.Policy) { dksec.Of(p).Image, dksec.Of(p).Workspace = img, brick })
	for i := 0; i < 2; i++ {
		e := newExec(t, eng, pol)
		if res := mustCall(t, e, ToolShell, sh("echo hello")); res.Stdout != "hello\n" {
			t.Fatalf("serve %d, a workspace's sitecustomize.py that exits: a shell call said %q %q", i, res.Stdout, res.Stderr)
		}
	}
}

// Only the wrapper's report counts: the line just before its ready line (atk47b F1: a plant's
// earlier "mcpsandbox-pid1:prctl" was taken).
func TestPid1ReportIsTheLineBeforeReady(t *testing.T) {
	const n = "abc"
	for _, c := range []struct{ got, want string }{
		{"mcpsandbox-pid1:prctl\nmcpsandbox-ready:abc\n", "prctl"},
		{"mcpsandbox-pid1:prctl\nmcpsandbox-pid1:reachable (x)\nmcpsandbox-ready:abc\n", "reachable (x)"},
		{"mcpsandbox-pid1:prctl\nnoise\nmcpsandbox-ready:abc\n", "reachable (a report came, but not on the line just before"},
		{"mcpsandbox-ready:abc\n", "reachable (no python3"},
	} {
		if got := pid1Report([]byte(c.got), n); !strings.HasPrefix(got, c.want) {
			t.Errorf("%q: report %q, want %q", c.got, got, c.want)
		}
	}
}

// A later container's reachable pid 1 is said, where the first's was not (atk47b F3: the first
// report was kept whatever came after): Pid1 and the log say it, and a later prctl hides it not.
func TestNotePid1KeepsTheWorst(t *testing.T) {
	var log strings.Builder
	e := &Executor{log: slog.New(slog.NewTextHandler(&log, nil))}
	e.notePid1("prctl")
	e.notePid1("reachable (the wrapper's /proc opened by a process of its uid though it used prctl)")
	e.notePid1("prctl")
	e.notePid1("reachable (another)")
	if p := e.Pid1(); !strings.HasPrefix(p, "reachable (the wrapper's") {
		t.Fatalf("Pid1 = %q after prctl, reachable, prctl", p)
	}
	if n := strings.Count(log.String(), "level=WARN"); n != 1 || !strings.Contains(log.String(), "before=prctl") {
		t.Fatalf("serve's log: %d warnings, want 1 naming the earlier word:\n%s", n, log.String())
	}
	if l := e.pid1Layer([]executor.Layer{{Name: LayerInit, Active: true}}); l[0].Active {
		t.Fatalf("--check's init layer says the watchdog is out of reach: %+v", l[0])
	}
}
