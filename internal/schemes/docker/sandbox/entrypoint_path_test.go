package sandbox

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// workspacePathDF is an image whose PATH names the workspace three ways before the image's own
// directories (a directory under it, a relative entry, the empty entry: the working directory is
// the workspace), and whose /usr/local/sbin/python3 is the image's link to a workspace file.
const workspacePathDF = "RUN ln -s /workspace/py3 /usr/local/sbin/python3\n" +
	"ENV PATH=/workspace/bin:bin::/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"

// plantedProgram is what a call writes where such a PATH looks first: it leaves a mark in the
// workspace, then runs what it stands for, so the container starts all the same.
func plantedProgram(mark, real string) []byte {
	return []byte("#!/bin/sh\necho ran >> /workspace/ran-" + mark + "\nexec " + real + " \"$@\"\n")
}

// plantFile writes name (mode 755) in the workspace ws, as a call with a writable workspace can.
func plantFile(t *testing.T, ws, name string, b []byte) {
	t.Helper()
	r, err := os.OpenRoot(ws)
	if err == nil {
		defer r.Close()
		if i := strings.LastIndexByte(name, '/'); i > 0 {
			r.MkdirAll(name[:i], 0o777)
		}
		err = r.WriteFile(name, b, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	r.Lchown(name, 65534, 65534)
}

// writableWorkspace is a workspace directory the containers' user (65534) can write.
func writableWorkspace(t *testing.T) string {
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	os.Chown(ws, 65534, 65534)
	return ws
}

// workspaceExec is an executor whose calls run in img with ws mounted writable.
func workspaceExec(t *testing.T, eng *engine.Client, img, ws string) *Executor {
	t.Helper()
	return newExec(t, eng, testPolicy(func(p *policy.Policy) {
		dksec.Of(p).Image, dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = img, ws, true
	}))
}

// planted lists the marks a planted program left in ws.
func planted(ws string) []string {
	var m []string
	es, _ := os.ReadDir(ws)
	for _, e := range es {
		if strings.HasPrefix(e.Name(), "ran-") {
			m = append(m, e.Name())
		}
	}
	return m
}

// The entrypoint found python3 by the image's PATH (command -v), so where the image named a
// workspace directory first a python3 a call wrote there ran as pid 1 and as the wrapper, forged
// the pid 1 report and held a session container past its stream's close (atk48b F1). It is taken
// from the image's own directories now: one each of a directory under the workspace, a relative
// entry, the empty entry and an image's link into the workspace holds a planted python3 in turn,
// and none runs; the program's PATH is the image's, and serve is told what was skipped. Without
// python3 the shell wrapper's own commands (head, cat, sleep, rm) are not the workspace's either.
func TestEntrypointTakesNoWorkspaceProgram(t *testing.T) {
	eng := needEngine(t)
	img := derivedImage(t, eng, "wspath", workspacePathDF)
	ws := writableWorkspace(t)
	// /workspace/bin (and the relative "bin"), "" (the working directory), and where the image's
	// /usr/local/sbin/python3 points.
	for _, n := range []string{"bin/python3", "python3", "py3"} {
		plantFile(t, ws, n, plantedProgram(strings.ReplaceAll(n, "/", "-"), "/usr/bin/python3.11"))
	}
	e := workspaceExec(t, eng, img, ws)
	const prog = "import os, sys\nprint(sys.executable)\nprint(os.environ['PATH'])\n"
	const want = "/usr/bin/python3\n/workspace/bin:bin::/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n"
	for _, gone := range []string{"bin/python3", "python3", "py3"} {
		res := mustCall(t, e, ToolPython, py(prog))
		if m := planted(ws); len(m) > 0 {
			b, _ := os.ReadFile(ws + "/" + m[0])
			t.Fatalf("a python3 in the workspace ran as the container's start (%v: %q); the call said %q %q, pid 1 %q", m, b, res.Stdout, res.Stderr, e.Pid1())
		}
		if res.Stdout != want || res.ExitCode != 0 {
			t.Fatalf("with %s planted first: stdout %q exit %d stderr %q, want %q", gone, res.Stdout, res.ExitCode, res.Stderr, want)
		}
		if p := e.Pid1(); strings.HasPrefix(p, "reachable") {
			t.Fatalf("pid 1 %q", p)
		}
		os.Remove(ws + "/" + gone)
	}
	note := e.pathNote.Load()
	for _, w := range []string{"/workspace/bin (under the mount /workspace)", `"bin" (relative)`, `"" (relative)`, "/usr/local/sbin/python3 (a link"} {
		if note == nil || !strings.Contains(*note, w) {
			t.Errorf("serve's note of what the entrypoint skipped %v does not say %q", note, w)
		}
	}

	t.Run("shell-wrapper", func(t *testing.T) {
		img := derivedImage(t, eng, "wspathnopy", "RUN rm -f /usr/bin/python3*\n"+workspacePathDF)
		for _, n := range []string{"head", "cat", "sleep", "rm"} {
			plantFile(t, ws, "bin/"+n, plantedProgram(n, "/usr/bin/"+n))
		}
		e := workspaceExec(t, eng, img, ws)
		res := mustCall(t, e, ToolShell, sh(`echo "$PATH"; echo "$(pwd)" "$PWD" "${OLDPWD-unset}"`))
		if m := planted(ws); len(m) > 0 {
			t.Fatalf("the shell wrapper ran the workspace's %v; the call said %q %q", m, res.Stdout, res.Stderr)
		}
		// The wrapper runs in / (atk49b F1), the script in the workspace.
		if res.Stdout != "/workspace/bin:bin::/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n/workspace /workspace unset\n" || res.ExitCode != 0 {
			t.Fatalf("shell call: stdout %q exit %d stderr %q", res.Stdout, res.ExitCode, res.Stderr)
		}
		if note := e.pathNote.Load(); note == nil || !strings.Contains(*note, "/workspace/bin (under the mount /workspace)") {
			t.Errorf("serve's note %v", note)
		}
		// Its stdin watcher read the /dev/null sh gives a background list, and killed itself and
		// the timeout's watcher at the start: the container ran on after its stream closed.
		// The script must still run when the stream closes (an early kill -9 -1 took it, or not).
		b, id := startWatched(t, e, eng.API)
		if _, err := b.hj.Conn.Write([]byte("shell 20000 13\nexec sleep 61")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond)
		top, err := eng.API.ContainerTop(t.Context(), id, []string{"-o", "pid,args"})
		running := false
		for _, p := range top.Processes {
			running = running || strings.Contains(strings.Join(p, " "), "sleep 61")
		}
		if err != nil || !running {
			t.Fatalf("the script is no longer running 1.5 s into a 20 s call: %v %v", top.Processes, err)
		}
		endsSoon(t, eng.API, b, id)
	})
}
