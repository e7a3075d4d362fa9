//go:build linux

package allowlist

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestDenyPatternAbbreviations(t *testing.T) {
	d, err := compileDeny("--files0-from*")
	if err != nil {
		t.Fatal(err)
	}
	for arg, want := range map[string]bool{
		"--files0-from=/etc/passwd": true, "--files0-from": true, "--files0=/x": true, "--fil=/x": true,
		"--f": false, "--": false, "-l": false, "notes.txt": false, "--lines": false, "x--files0-from": false,
	} {
		if got := d.match(arg); got != want {
			t.Errorf("match(%q) = %v, want %v", arg, got, want)
		}
	}
	if _, err := compileDeny("[x"); err == nil {
		t.Error("unbalanced class accepted")
	}
}

func TestPathCandidates(t *testing.T) {
	for arg, want := range map[string][]string{
		"notes.txt": {"notes.txt"}, "-l": nil, "--lines": nil, "--out=/x": {"/x"},
		"-o/etc/x": {"/etc/x", "/etc/x"}, "-o../x": {"../x", "/x"}, "-": nil, "": nil,
	} {
		if got := pathCandidates(arg); !reflect.DeepEqual(got, want) {
			t.Errorf("pathCandidates(%q) = %q, want %q", arg, got, want)
		}
	}
}

func TestInsideWorkspace(t *testing.T) {
	root := t.TempDir()
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	os.Mkdir(filepath.Join(root, "out"), 0o755)
	os.Symlink(filepath.Join(root, "out"), filepath.Join(ws, "esc"))
	os.Symlink("sub", filepath.Join(ws, "in"))
	os.Mkdir(filepath.Join(ws, "sub"), 0o755)
	e := &Executor{ws: ws}
	for p, want := range map[string]bool{
		"a": true, "sub/new/file": true, "in/x": true, ".": true, ws: true,
		"..": false, "../ws2": false, "esc/x": false, "/etc/passwd": false, "sub/../../out": false,
	} {
		if _, got := e.insideWorkspace(p); got != want {
			t.Errorf("insideWorkspace(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestHostExecutedNames(t *testing.T) {
	ws := "/w"
	for p, want := range map[string]string{
		"/w/.git/config": ".git/", "/w/.git/hooks/pre-commit": ".git/", "/w/sub/.git/config": ".git/",
		"/w/.git": ".git", "/w/.envrc": ".envrc", "/w/.vscode/tasks.json": ".vscode/", "/w/a/.mcp.json": ".mcp.json",
		"/w/notes.txt": "", "/w": "", "/w/git/config": "", "/w/.gitignore": "", "/w/x.git": "",
	} {
		if got := hostExecuted(ws, p); got != want {
			t.Errorf("hostExecuted(%q) = %q, want %q", p, got, want)
		}
	}
}
