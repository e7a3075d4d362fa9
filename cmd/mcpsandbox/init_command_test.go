package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --command names what every client entry runs, as whoever starts the client: a binary another
// user owns or may write (or whose directory they may) is refused, as serve refuses such a
// policy file (trial30 F18).
func TestInitRefusesACommandOthersCanReplace(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin, run := initWithCommand(t, dir)
	os.Chmod(bin, 0o757)
	if err := run(); err == nil || !strings.Contains(err.Error(), "--command: the binary "+bin+" is writable by everyone") {
		t.Errorf("a binary anyone may write: %v", err)
	}
	os.Chmod(bin, 0o755)
	os.Chmod(dir, 0o777)
	if err := run(); err == nil || !strings.Contains(err.Error(), "the directory "+dir+" holding the binary is writable by everyone") {
		t.Errorf("a binary in a directory anyone may write: %v", err)
	}
	os.Chmod(dir, 0o755)
	if os.Geteuid() == 0 {
		os.Chown(bin, 4321, 4321)
		if err := run(); err == nil || !strings.Contains(err.Error(), "is owned by uid 4321") {
			t.Errorf("a binary another user owns: %v", err)
		}
	}
}

// Not only the binary's directory: a world-writable directory above it (not sticky) lets any
// user rename the binary's directory and put their own in its place, which the client then
// runs as its user; init names that directory and the fix (attack round atk32, F8).
func TestInitRefusesACommandUnderALooseAncestor(t *testing.T) {
	gp := filepath.Join(t.TempDir(), "gp")
	os.MkdirAll(filepath.Join(gp, "wbin"), 0o755)
	_, run := initWithCommand(t, filepath.Join(gp, "wbin"))
	os.Chmod(gp, 0o777)
	want := "--command: the directory " + gp + " above the binary is writable by everyone: anyone could replace what your clients run (fix: chmod o-w " + gp + ")"
	if err := run(); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a binary under a directory anyone may write: %v\nwant %q", err, want)
	}
	os.Chmod(gp, 0o777|os.ModeSticky)
	// passes the check (the stand-in binary then fails init's start probe)
	if err := run(); err != nil && strings.Contains(err.Error(), "above the binary") {
		t.Errorf("a binary under a sticky directory (as /tmp): %v", err)
	}
}

// initWithCommand puts a stand-in binary in dir and returns a run of init --command naming it,
// in a home of the test's own.
func initWithCommand(t *testing.T, dir string) (bin string, run func() error) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	bin = filepath.Join(dir, "mcpsandbox")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	return bin, func() error {
		_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--command", bin,
			"--print", "--yes", "--policy-out", filepath.Join(home, "p.toml"))
		return err
	}
}
