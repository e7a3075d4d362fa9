package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/projectpolicy"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// portableFiles are the project files init --portable writes for the four clients with one.
var portableFiles = []string{".mcp.json", filepath.Join(".gemini", "settings.json"), filepath.Join(".vscode", "mcp.json"), filepath.Join(".cursor", "mcp.json")}

// onPATH puts this test binary on PATH as mcpsandbox (it stands in for it: TestMain), as the
// committed entries find it.
func onPATH(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.Symlink(exe, filepath.Join(dir, "mcpsandbox")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	return dir
}

// The team's path (trial38 F1): a lead's init --portable writes project files that hold no path
// of the lead's machine; a teammate with another HOME, in a copy of those files, runs the one
// command the lead's init printed: the committed files stay byte for byte (no backup), their
// own policy for their checkout is written under their config directory, and serve --project
// in the clone (or a subdirectory of it) serves it. No policy, or one whose workspace is another
// checkout, is refused with what to run. Init's start check runs the entry in the checkout, as
// the client would, though init ran elsewhere (--project).
// Catches init-portable-absolute, init-portable-check-elsewhere, init-portable-note-absolute,
// project-policy-workspace-unchecked.
func TestPortableTeamPath(t *testing.T) {
	bin := onPATH(t)
	lead := initHome(t)
	checkout := policy.RealPath(t.TempDir())
	t.Chdir(t.TempDir()) // init runs elsewhere: --project names the checkout
	stdout, stderr, err := runCLI("init", "--portable", "--project", checkout, "--scheme", "allowlist", "--allow", "wc",
		"--client", "claude-code:project", "--client", "gemini:project", "--client", "vscode", "--client", "cursor:project", "--yes")
	if err != nil {
		t.Fatalf("lead's init: %v\n%s\n%s", err, stdout, stderr)
	}
	if !strings.Contains(stdout, "it holds no machine paths") || !strings.Contains(stdout, "may be committed") {
		t.Errorf("init did not say the project files may be committed:\n%s", stdout)
	}
	committed := map[string][]byte{}
	for _, f := range portableFiles {
		b, err := os.ReadFile(filepath.Join(checkout, f))
		if err != nil {
			t.Fatal(err)
		}
		committed[f] = b
		for _, machine := range []string{lead, checkout, bin, os.TempDir()} {
			if strings.Contains(string(b), machine) {
				t.Errorf("%s holds the machine path %s:\n%s", f, machine, b)
			}
		}
		if !strings.Contains(string(b), `"command": "mcpsandbox"`) || !strings.Contains(string(b), `"serve", "--project"`) {
			t.Errorf("%s: not the portable entry:\n%s", f, b)
		}
	}
	_, teammate, ok := strings.Cut(stdout, "runs in their own clone:\n")
	teammate, _, _ = strings.Cut(strings.TrimSpace(teammate), "\n")
	if !ok || !strings.HasPrefix(teammate, "mcpsandbox init --portable ") || strings.Contains(teammate, checkout) {
		t.Fatalf("the teammate's command: %q\n%s", teammate, stdout)
	}

	mate := initHome(t) // the teammate: another HOME
	clone := policy.RealPath(t.TempDir())
	for f, b := range committed {
		os.MkdirAll(filepath.Join(clone, filepath.Dir(f)), 0o755)
		if err := os.WriteFile(filepath.Join(clone, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(clone)
	if _, _, err := runCLI("serve", "--project", "--check"); err == nil || !strings.Contains(err.Error(), "mcpsandbox init --portable") {
		t.Errorf("serve --project with no policy of this user: err = %v, want the command that makes it", err)
	}
	if out, serr, err := runCLI(strings.Fields(teammate)[1:]...); err != nil {
		t.Fatalf("teammate's init: %v\n%s\n%s", err, out, serr)
	}
	for f, b := range committed {
		if got, _ := os.ReadFile(filepath.Join(clone, f)); string(got) != string(b) {
			t.Errorf("the teammate's init rewrote the committed %s:\n%s", f, got)
		}
	}
	if _, err := os.Stat(filepath.Join(mate, ".local", "state", "mcpsandbox", "backups")); err == nil {
		t.Error("the teammate's init backed up committed files it left as they were")
	}
	own := projectpolicy.Path(filepath.Join(mate, ".config"), clone)
	if p, err := policy.Load(own); err != nil || policy.RealPath(p.WorkspaceDir()) != clone {
		t.Fatalf("the teammate's own policy %s: %v", own, err)
	}
	sub := filepath.Join(clone, "src")
	os.Mkdir(sub, 0o755)
	t.Chdir(sub)
	if out, serr, err := runCLI("serve", "--project", "--check"); err != nil || !strings.Contains(out, `policy "sandbox"`) {
		t.Errorf("serve --project in the clone's subdirectory: %v\n%s\n%s", err, out, serr)
	}

	// the lead's policy (its workspace the lead's checkout) where the clone's is looked for
	leads, err := os.ReadFile(projectpolicy.Path(filepath.Join(lead, ".config"), checkout))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(own, leads, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI("serve", "--project", clone, "--check"); err == nil || !strings.Contains(err.Error(), "its workspace is "+checkout) || !strings.Contains(err.Error(), clone) {
		t.Errorf("serve --project on a policy for another checkout: err = %v, want a refusal naming both", err)
	}
}

// init --portable refuses what would put a machine's path or another policy in the committed
// files, and a client scope outside the project.
func TestPortableRefusals(t *testing.T) {
	onPATH(t)
	initHome(t)
	t.Chdir(t.TempDir())
	other := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--policy-out", "/tmp/p.toml"}, "--policy-out does not go with --portable"},
		{[]string{"--command", "/usr/bin/true"}, "--command does not go with --portable"},
		{[]string{"--client", "claude-code"}, "not a file of the project"},
		{[]string{"--workspace", other}, "names another directory"},
	} {
		args := append([]string{"init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--yes"}, c.args...)
		if _, _, err := runCLI(args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", c.args, err, c.want)
		}
	}
	if _, _, err := runCLI("serve", "--project", "--policy", "p.toml"); err == nil || !strings.Contains(err.Error(), "without --policy") {
		t.Errorf("serve --project --policy: err = %v", err)
	}
}
