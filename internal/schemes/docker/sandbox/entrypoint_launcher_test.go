package sandbox

import (
	"os"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// launcherDF is an image whose python3 is a pyenv-style shim, a script of the image's in a
// directory first on its PATH: it takes the version a .python-version in the working directory
// names (as pyenv before 2.3.3 took any name, CVE-2022-35861), else the "system" one, python3 by
// the PATH less its own directory, as pyenv's shims do. The PATH names /workspace/bin after it.
const launcherDF = "RUN mkdir -p /opt/pyenv/shims /opt/pyenv/versions && printf '%s\\n' '#!/bin/sh' " +
	"'if [ -r .python-version ]; then read -r v <.python-version; exec \"/opt/pyenv/versions/$v/bin/python3\" \"$@\"; fi' " +
	"'PATH=${PATH#/opt/pyenv/shims:}' 'exec python3 \"$@\"' >/opt/pyenv/shims/python3 && chmod 755 /opt/pyenv/shims/python3\n" +
	"ENV PATH=" + launcherPath + "\n"

const launcherPath = "/opt/pyenv/shims:/workspace/bin:/usr/local/bin:/usr/bin:/bin"

// The entrypoint checked the python3 file it execs, not what that file runs: a launcher python3
// (pyenv's, asdf's or mise's shims, exec python3.11 by name, #!/usr/bin/env python3.11) found the
// interpreter again by the image's PATH, which named /workspace/bin, or from the working
// directory, the workspace; a python3 a call wrote there ran as pid 1 (atk49b F1). pid 1 starts in
// / with the kept directories alone as its PATH now: a python3 planted in /workspace/bin, and a
// .python-version naming a planted one, run in no container; the shim image still runs calls,
// per call and in a session, and the program has the image's PATH, PWD and working directory.
func TestEntrypointLauncherTakesNoWorkspaceProgram(t *testing.T) {
	eng := needEngine(t)
	img := derivedImage(t, eng, "launcher", launcherDF)
	ws := writableWorkspace(t)
	e := workspaceExec(t, eng, img, ws)
	const prog = "import os, sys\nprint(sys.executable, os.getcwd(), os.environ.get('PWD'), os.environ.get('OLDPWD'))\nprint(os.environ['PATH'])\n"
	const want = "/usr/bin/python3 /workspace /workspace None\n" + launcherPath + "\n"
	const shWant = launcherPath + "\n/workspace /workspace unset\n"
	check := func(what string) {
		t.Helper()
		res := mustCall(t, e, ToolPython, py(prog))
		if m := planted(ws); len(m) > 0 {
			b, _ := os.ReadFile(ws + "/" + m[0])
			t.Fatalf("%s: a python3 in the workspace ran as the container's start (%v: %q); the call said %q %q, pid 1 %q", what, m, b, res.Stdout, res.Stderr, e.Pid1())
		}
		if res.Stdout != want || res.ExitCode != 0 {
			t.Fatalf("%s: stdout %q exit %d stderr %q, want %q", what, res.Stdout, res.ExitCode, res.Stderr, want)
		}
		if p := e.Pid1(); strings.HasPrefix(p, "reachable") {
			t.Fatalf("%s: pid 1 %q", what, p)
		}
		res = mustCall(t, e, ToolShell, sh(`echo "$PATH"; echo "$(pwd)" "$PWD" "${OLDPWD-unset}"`))
		if res.Stdout != shWant || res.ExitCode != 0 {
			t.Fatalf("%s: shell call: stdout %q exit %d stderr %q, want %q", what, res.Stdout, res.ExitCode, res.Stderr, shWant)
		}
	}
	check("nothing planted")
	// By the PATH: the shim's PATH less its own directory names /workspace/bin first.
	plantFile(t, ws, "bin/python3", plantedProgram("bin-python3", "/usr/bin/python3.11"))
	check("bin/python3 planted")
	os.Remove(ws + "/bin/python3")
	// From the working directory: a .python-version naming a planted interpreter.
	plantFile(t, ws, "pv/bin/python3", plantedProgram("pv", "/usr/bin/python3.11"))
	plantFile(t, ws, ".python-version", []byte("../../../workspace/pv\n"))
	check(".python-version planted")

	// A session's supervisor starts as the per-call wrapper does; its interpreter, the program's,
	// runs in the workspace with the image's PATH (a session's workspace is read-only).
	se := newExec(t, eng, sessionPolicy(func(p *policy.Policy) {
		dksec.Of(p).Image, dksec.Of(p).Workspace = img, ws
	}))
	os.Remove(ws + "/.python-version")
	r := mustIn(t, se, "A", ToolPython, py("x = 1\n"+prog))
	if r.Stdout != want || r.ExitCode != 0 {
		t.Fatalf("session call: stdout %q exit %d stderr %q, want %q", r.Stdout, r.ExitCode, r.Stderr, want)
	}
	if r := mustIn(t, se, "A", ToolShell, sh(`echo "$PATH"; echo "$(pwd)" "$PWD" "${OLDPWD-unset}"`)); r.Stdout != shWant {
		t.Fatalf("session shell call: stdout %q stderr %q, want %q", r.Stdout, r.Stderr, shWant)
	}
	if m := planted(ws); len(m) > 0 {
		t.Fatalf("a python3 in the workspace ran in the session's container: %v", m)
	}
}
