//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
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
		if got := e.resolve(p); got.inside != want || got.err != nil {
			t.Errorf("resolve(%q) = %+v, want inside=%v", p, got, want)
		}
	}
}
