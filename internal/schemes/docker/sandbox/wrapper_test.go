package sandbox

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// hostileModules shadow what serve's wrapper and watchdog use (at start, at a program's error,
// at exit) and what Python imports on its own (site's sitecustomize and usercustomize): each
// announces itself on both streams when imported.
var hostileModules = []string{"traceback", "linecache", "tokenize", "json", "os", "sitecustomize", "usercustomize",
	"select", "signal", "socket", "selectors", "codecs", "io", "collections", "itertools", "textwrap", "contextlib", "warnings"}

// pyq is s as a Python string literal.
func pyq(s string) string { return strconv.Quote(s) }

func hostileSource(name string) string {
	return "import sys\nsys.stdout.write('HOSTILE-" + name + "\\n')\nsys.stderr.write('HOSTILE-" + name + "\\n')\n"
}

// The in-container wrapper never imports from the workspace: modules there that shadow the
// standard library's, present in the project or written by an earlier call, change neither the
// exit status, nor the output, nor the error report of a program; the program's own imports
// still see the workspace first, as `python3 -c` in that directory would.
func TestWrapperIgnoresWorkspaceModules(t *testing.T) {
	eng := needEngine(t)
	ws := t.TempDir()
	if err := os.Chmod(ws, 0o777); err != nil { // the container's uid writes the later call's module
		t.Fatal(err)
	}
	for _, m := range hostileModules {
		if err := os.WriteFile(filepath.Join(ws, m+".py"), []byte(hostileSource(m)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(ws, "mymod.py"), []byte("VALUE = 'mymod-from-workspace'\n"), 0o644)
	modes(t, eng, func(p *policy.Policy) { dksec.Of(p).Workspace = ws; dksec.Of(p).WorkspaceWritable = true }, func(t *testing.T, e *Executor) {
		// One call writes the module the next call's error report would have imported.
		os.Remove(filepath.Join(ws, "traceback.py"))
		w := mustCall(t, e, ToolPython, map[string]any{"code": "open('/workspace/traceback.py', 'w').write(" + pyq(hostileSource("traceback")) + ")"})
		if _, err := os.Stat(filepath.Join(ws, "traceback.py")); err != nil || w.ExitCode != 0 {
			t.Fatalf("a call did not write traceback.py (%v): %+v", err, w)
		}
		for _, c := range []struct {
			tool, src string
			exit      int
			out, err  string
		}{
			{ToolPython, `print("hi")`, 0, "hi\n", ""},
			{ToolPython, `raise ValueError("boom")`, 1, "", "ValueError: boom"},
			{ToolPython, "def f():\n    raise KeyError('k') from OSError('cause')\nf()", 1, "", "The above exception was the direct cause"},
			{ToolPython, `undefined_name_xyz`, 1, "", "NameError: name 'undefined_name_xyz' is not defined"},
			{ToolPython, "def (", 1, "", "SyntaxError"},
			{ToolPython, `raise KeyboardInterrupt`, 130, "", "KeyboardInterrupt"},
			{ToolPython, `import sys; sys.exit(3)`, 3, "", ""},
			{ToolPython, `import sys; sys.exit("bye")`, 1, "", "bye"},
			{ToolPython, `import mymod; print(mymod.VALUE)`, 0, "mymod-from-workspace\n", ""},
			{ToolShell, `echo hi; exit 4`, 4, "hi\n", ""},
		} {
			arg := "code"
			if c.tool == ToolShell {
				arg = "script"
			}
			r := mustCall(t, e, c.tool, map[string]any{arg: c.src})
			if r.ExitCode != c.exit || r.Stdout != c.out || !strings.Contains(r.Stderr, c.err) || strings.Contains(r.Stdout+r.Stderr, "HOSTILE") {
				t.Errorf("%s %q: exit %d, stdout %q, stderr %q; want exit %d, stdout %q, stderr with %q, no workspace module run",
					c.tool, c.src, r.ExitCode, r.Stdout, r.Stderr, c.exit, c.out, c.err)
			}
		}
		// Control: the program's own import of a shadowing module gets the workspace's, as
		// Python does for a program there, so the detector above can see one run.
		r := mustCall(t, e, ToolPython, map[string]any{"code": `import json`})
		if !strings.Contains(r.Stdout, "HOSTILE-json") {
			t.Errorf("control: the program's own `import json` did not run the workspace's json.py: %+v", r)
		}
	})
}

// The isolation is one line of the wrapper (the mutant docker-wrapper-isolated removes it), run
// first: nothing is imported before it.
func TestWrapperIsolatesFirst(t *testing.T) {
	head, _, ok := strings.Cut(wrapperPy, isolateLine)
	if !ok || strings.Count(wrapperPy, isolateLine) != 1 || head != "import sys\nprogram_path = sys.path\n" {
		t.Errorf("the wrapper does not start with `import sys` and the isolation line %q once:\n%.200s", isolateLine, wrapperPy)
	}
}

// A shell script's errors name the script, not the memfd it would be read from (trial35 F10:
// dash names a script file by its path, "/proc/self/fd/3: 1: curl: not found"): $0 is
// "script", cold and pooled; one past the kernel's argument limit still runs (from the memfd),
// and a script reads no stdin either way.
func TestShellErrorsNameTheScript(t *testing.T) {
	eng := needEngine(t)
	modes(t, eng, nil, func(t *testing.T, e *Executor) {
		r := mustCall(t, e, ToolShell, map[string]any{"script": "echo \"$0\"\nno-such-cmd-x\ncat\nexit 3"})
		if r.ExitCode != 3 || r.Stdout != "script\n" || r.Stderr != "script: 2: no-such-cmd-x: not found\n" {
			t.Errorf("the error does not name the script: %+v", r)
		}
		big := strings.Repeat("x=1\n", 40000) + "cat\necho done"
		r = mustCall(t, e, ToolShell, map[string]any{"script": big})
		if r.ExitCode != 0 || r.Stdout != "done\n" {
			t.Errorf("a script past the argument limit: %+v", r)
		}
	})
}
