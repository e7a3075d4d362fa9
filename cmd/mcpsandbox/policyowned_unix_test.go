//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// atk33 F9: a docker policy (not only an allowlist one) under a world-writable directory, not
// sticky, is refused before serve does anything with it: the policy chooses the image, the
// mounts and the network. Catches the serve-policy-owned-any-scheme mutant.
func TestServeChecksEverySchemesPolicyFile(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	t.Setenv("HOME", t.TempDir())
	loose := filepath.Join(t.TempDir(), "loose")
	if err := os.MkdirAll(filepath.Join(loose, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(loose, "sub", "p.toml")
	if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"docker\"\n[docker]\nreuse = \"session\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chmod(loose, 0o777)
	_, _, err := runCLI("serve", "--policy", pol, "--check")
	want := "refusing to serve: the directory " + loose + " above the policy file is writable by everyone"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("a docker policy under a world-writable directory: %v\nwant %q", err, want)
	}
}

// serve --project holds this user's policy for the checkout to the policy file's ownership rule:
// a projects directory everyone may write is refused (trial38 F1).
func TestServeProjectPolicyHeldToTheOwnershipRule(t *testing.T) {
	onPATH(t)
	home := initHome(t)
	checkout := t.TempDir()
	t.Chdir(checkout)
	if out, serr, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--yes"); err != nil {
		t.Fatalf("init --portable: %v\n%s\n%s", err, out, serr)
	}
	if _, _, err := runCLI("serve", "--project", "--check"); err != nil {
		t.Fatalf("serve --project: %v", err)
	}
	projects := filepath.Join(home, ".config", "mcpsandbox", "projects")
	os.Chmod(projects, 0o777)
	_, _, err := runCLI("serve", "--project", "--check")
	if err == nil || !strings.Contains(err.Error(), "writable by everyone") {
		t.Errorf("a checkout policy in a directory everyone may write: err = %v, want it refused", err)
	}
}
