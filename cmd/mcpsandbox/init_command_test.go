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
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "mcpsandbox")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	run := func() error {
		_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--command", bin,
			"--print", "--yes", "--policy-out", filepath.Join(dir, "p.toml"))
		return err
	}
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
