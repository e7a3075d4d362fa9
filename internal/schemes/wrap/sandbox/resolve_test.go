package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// A script is run by its #! interpreter (found on PATH through env -S), the install dirs are the
// script's and the interpreter's own, never a shared dir, and ~/.local gives its bin dir only.
func TestResolveProgram(t *testing.T) {
	root := t.TempDir()
	home := filepath.Join(root, "home")
	t.Setenv("HOME", home)
	interpDir := filepath.Join(root, "opt", "lang", "bin")
	toolDir := filepath.Join(home, ".local", "bin")
	for _, d := range []string{interpDir, toolDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	interp := filepath.Join(interpDir, "lang")
	if err := os.WriteFile(interp, []byte("\x7fELF"), 0o755); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(toolDir, "server")
	if err := os.WriteFile(script, []byte("#!/usr/bin/env -S lang -u\nbody\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	pr, err := resolveProgram([]string{"server", "--flag"}, toolDir+":"+interpDir, home, true)
	if err != nil {
		t.Fatal(err)
	}
	if pr.Binary != interp || !slices.Equal(pr.Argv, []string{interp, "-u", script, "--flag"}) {
		t.Fatalf("binary %s argv %q", pr.Binary, pr.Argv)
	}
	if !slices.Contains(pr.ExecDirs, toolDir) || !slices.Contains(pr.ExecDirs, filepath.Join(root, "opt", "lang")) || slices.Contains(pr.ExecDirs, filepath.Join(home, ".local")) {
		t.Fatalf("install dirs %q", pr.ExecDirs)
	}
	if _, err := resolveProgram([]string{"nope"}, toolDir, home, true); err == nil {
		t.Fatal("a program not on PATH resolves")
	}
	tmpBin := filepath.Join(os.TempDir(), filepath.Base(root)+"-bin")
	os.WriteFile(tmpBin, []byte("\x7fELF"), 0o755)
	defer os.Remove(tmpBin)
	if pr, err := resolveProgram([]string{tmpBin}, "", home, true); err != nil || slices.Contains(pr.ExecDirs, os.TempDir()) {
		t.Fatalf("a program directly in %s: %v %q (the shared dir must not be an install dir)", os.TempDir(), err, pr.ExecDirs)
	}
}
