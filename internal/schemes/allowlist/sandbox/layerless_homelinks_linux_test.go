package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Without a layer (a host where overlayfs cannot be mounted on the workspace) nothing commits a
// call's writes, so a home's link into the workspace through a link of it (~/.zshrc ->
// ws/zsh/zshrc -> ws/zsh/real/zshrc) or to a missing name (~/.profile -> ws/prof/profile) is
// protected by its directory's being read-only for the call: the call can neither replace the
// link nor make the name, while the rest of the workspace stays writable; for a top-level one
// (~/.bashrc -> ws/bashrc -> ws/shell/bashrc) the workspace is read-only whole, a protected
// name in a directory below included (its pin is not a writable hole in it), and the layer
// report says which directory and why (atk41 F16). Red when the link roots are skipped as with
// a layer (mutant allowlist-layerless-link-parent-ro).
func TestLayerlessHomeLinkParentsReadOnly(t *testing.T) {
	links := func(t *testing.T, home, ws string, m map[string]string) {
		for link, target := range m {
			os.MkdirAll(filepath.Dir(filepath.Join(home, link)), 0o755)
			if err := os.Symlink(filepath.Join(ws, target), filepath.Join(home, link)); err != nil {
				t.Fatal(err)
			}
		}
	}
	layerless := func(t *testing.T) *Executor {
		home := t.TempDir()
		t.Setenv("HOME", home)
		pythonExec.noLayer = true
		defer func() { pythonExec.noLayer = false }()
		e := pythonExecutor(t, nil, false)
		if e.layerRoot != "" {
			t.Fatalf("the test's executor has a layer at %s", e.layerRoot)
		}
		if !e.attr.has(unix.CLONE_NEWNS) {
			t.Skip("SKIP: no mount namespace here: protected paths are not mounted read-only at all (the layer report says so)")
		}
		return e
	}
	const write = `
import os
for p in sys.argv[1:]:
    try:
        if os.path.islink(p):
            os.remove(p)
        open(p, "w").write("the call's\n")
        print(p, "written")
    except OSError as err:
        print(p, err)
`
	call := func(t *testing.T, e *Executor, paths ...string) string {
		t.Helper()
		res := runPython(t, e, strings.Replace(write, "sys.argv[1:]", pyList(paths), 1))
		return res.Stdout
	}

	t.Run("below the top level", func(t *testing.T) {
		e := layerless(t)
		wsFiles(t, e.ws, map[string]string{"zsh/real/zshrc": "# mine\n", "zsh/zshrc": "->real/zshrc", "prof/other": "o\n", "notes.txt": "n\n"})
		links(t, os.Getenv("HOME"), e.ws, map[string]string{".zshrc": "zsh/zshrc", ".profile": "prof/profile"})
		time.Sleep(2100 * time.Millisecond) // past the executor's look at the home, taken again every 2s
		out := call(t, e, "zsh/zshrc", "prof/profile", "notes.txt")
		if st, err := os.Lstat(filepath.Join(e.ws, "zsh/zshrc")); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("zsh/zshrc is no longer the host's link (%v); the call said %q", err, out)
		}
		if got, _ := os.ReadFile(filepath.Join(e.ws, "zsh/real/zshrc")); string(got) != "# mine\n" {
			t.Errorf("~/.zshrc reads %q after the call", got)
		}
		if _, err := os.Lstat(filepath.Join(e.ws, "prof/profile")); err == nil {
			t.Errorf("the call made prof/profile, which ~/.profile leads to; it said %q", out)
		}
		if got, _ := os.ReadFile(filepath.Join(e.ws, "notes.txt")); string(got) != "the call's\n" {
			t.Errorf("notes.txt reads %q: the rest of the workspace should stay writable (the call said %q)", got, out)
		}
		d := e.workspaceLayer().Detail
		for _, w := range []string{filepath.Join(e.ws, "zsh") + " (for " + filepath.Join(e.ws, "zsh/zshrc"), filepath.Join(e.ws, "prof") + " (for " + filepath.Join(e.ws, "prof/profile")} {
			if !strings.Contains(d, w) {
				t.Errorf("the layer report does not say %q: %s", w, d)
			}
		}
	})

	t.Run("at the top level", func(t *testing.T) {
		e := layerless(t)
		wsFiles(t, e.ws, map[string]string{"shell/bashrc": "# mine\n", "bashrc": "->shell/bashrc", "sub/.envrc": "e\n", "sub/x": "x\n", "notes.txt": "n\n"})
		links(t, os.Getenv("HOME"), e.ws, map[string]string{".bashrc": "bashrc"})
		time.Sleep(2100 * time.Millisecond)
		out := call(t, e, "bashrc", "sub/new", "notes.txt")
		if st, err := os.Lstat(filepath.Join(e.ws, "bashrc")); err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("bashrc is no longer the host's link (%v); the call said %q", err, out)
		}
		if got, _ := os.ReadFile(filepath.Join(e.ws, "shell/bashrc")); string(got) != "# mine\n" {
			t.Errorf("~/.bashrc reads %q after the call", got)
		}
		for _, p := range []string{"sub/new", "notes.txt"} {
			if !strings.Contains(out, p+" [Errno 30]") {
				t.Errorf("%s: not read-only in the call (the workspace is, whole): %q", p, out)
			}
		}
	})
}

// pyList is a Python list literal of the strings (no quotes or backslashes in them).
func pyList(ss []string) string { return `["` + strings.Join(ss, `", "`) + `"]` }
