package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// init judges a workspace by serve's own rule before it writes or advises anything: a system
// directory, a home's dot directory (keys, configuration other programs obey) or a file is
// refused up front, for each scheme, and no chown of it is suggested (trial30 F10, F10b, F13).
func TestInitRefusesWorkspacesServeWould(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	dir := t.TempDir()
	t.Chdir(dir)
	for _, d := range []string{".ssh", ".config/mcpsandbox", ".cursor"} {
		os.MkdirAll(filepath.Join(home, d), 0o700)
	}
	file := filepath.Join(dir, "bad.toml")
	os.WriteFile(file, []byte("x"), 0o644)
	link := filepath.Join(dir, "sshlink")
	os.Symlink(filepath.Join(home, ".ssh"), link)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(home, ".ssh")}, "a dot directory of the home " + home},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", "~/.config/mcpsandbox"}, "lies in " + filepath.Join(home, ".config")},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", "~/.cursor/new"}, "lies in " + filepath.Join(home, ".cursor")},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", link}, "resolves to " + filepath.Join(home, ".ssh")},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", "/etc"}, "workspace is the system directory /etc"},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", "/usr/local/share/ws"}, "is inside the system directory /usr"},
		{[]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", file}, "is not a directory"},
		{[]string{"--scheme", "docker", "--image", "mcpsandbox-test:bookworm", "--docker-workspace", filepath.Join(home, ".ssh")}, "a dot directory of the home " + home},
		{[]string{"--scheme", "docker", "--image", "mcpsandbox-test:bookworm", "--docker-workspace", "~/.cursor/new"}, "lies in " + filepath.Join(home, ".cursor")},
	} {
		args := append([]string{"init", "--yes", "--print", "--policy-out", filepath.Join(dir, "p.toml")}, c.args...)
		_, stderr, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
		if strings.Contains(stderr, "chown") {
			t.Errorf("%v: init advised a chown of a workspace it refuses:\n%s", c.args, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, "p.toml")); err == nil {
			t.Fatalf("%v: a policy was written", c.args)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor/new")); err == nil {
		t.Errorf("init created the refused workspace ~/.cursor/new")
	}
}
