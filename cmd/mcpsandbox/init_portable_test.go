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
	if !strings.Contains(stdout, "it holds no machine paths") || !strings.Contains(stdout, "the files may be committed") {
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

// atk39b F1: a committed entry that runs mcpsandbox, under init's name or another, is init's
// own only when every key that decides what runs or how is init's: an env PATH, a cwd, an
// envFile or a key init does not know beside init's command and args is refused, naming the
// entry, the key and the fix, and the file is left as it was (it was "this very server, so
// nothing was added", and the client started the repository's ./tools/mcpsandbox). Only
// settings of the client (a timeout, trust) are not a difference. Catches
// init-portable-same-transport.
func TestPortableSameServerEveryKey(t *testing.T) {
	onPATH(t)
	initHome(t)
	for _, c := range []struct{ name, extra, key string }{
		{"mcpsandbox", `"env": {"PATH": "./tools:/usr/bin:/bin"}`, "env"},
		{"mcpsandbox", `"cwd": ".."`, "cwd"},
		{"mcpsandbox", `"envFile": ".env"`, "envFile"},
		{"mcpsandbox", `"startVia": "./tools"`, "startVia"},
		{"other", `"env": {"XDG_CONFIG_HOME": "./cfg"}`, "env"},
		{"sandbox", `"env": {"PATH": "./tools:/usr/bin:/bin"}`, "env"}, // init's own name, "type" as init writes it
	} {
		checkout := policy.RealPath(t.TempDir())
		t.Chdir(checkout)
		text := `{"mcpServers": {"` + c.name + `": {"command": "mcpsandbox", "args": ["serve", "--project"], "type": "stdio", ` + c.extra + `}}}` + "\n"
		os.WriteFile(".mcp.json", []byte(text), 0o644)
		_, _, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "claude-code:project", "--yes")
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s with %s: err = %v, want a refusal naming the entry and %s", c.name, c.extra, err, c.key)
		}
		if b, _ := os.ReadFile(".mcp.json"); string(b) != text {
			t.Errorf("%s with %s: the file was changed:\n%s", c.name, c.extra, b)
		}
	}
	// a setting of the client's is no difference: the entry is init's, nothing added
	checkout := policy.RealPath(t.TempDir())
	t.Chdir(checkout)
	text := `{"mcpServers": {"mcpsandbox": {"command": "mcpsandbox", "args": ["serve", "--project"], "type": "stdio", "timeout": 30000}}}` + "\n"
	os.WriteFile(".mcp.json", []byte(text), 0o644)
	out, serr, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "claude-code:project", "--yes")
	if err != nil || !strings.Contains(serr+out, `already configured as "mcpsandbox"`) {
		t.Errorf("init's entry with a timeout: %v\n%s\n%s", err, out, serr)
	}
	if b, _ := os.ReadFile(".mcp.json"); string(b) != text {
		t.Errorf("init's entry with a timeout: the file was changed:\n%s", b)
	}
}

// atk39b F1: the portable report speaks for init's entry in each file, not the whole file: a
// committed Gemini CLI settings file's tools.discoveryCommand (run on the host when Gemini CLI
// starts) and another server entry are named as not checked by init. Catches
// init-portable-report-scope.
func TestPortableReportScope(t *testing.T) {
	onPATH(t)
	initHome(t)
	checkout := policy.RealPath(t.TempDir())
	t.Chdir(checkout)
	os.MkdirAll(".gemini", 0o755)
	os.WriteFile(filepath.Join(".gemini", "settings.json"), []byte(`{
  "theme": "Default",
  "tools": {"discoveryCommand": "./tools/discover.sh", "callCommand": "./tools/call.sh"},
  "hooks": {"BeforeTool": [{"command": "./tools/hook.sh"}]},
  "mcpServers": {"fs": {"command": "node", "args": ["./tools/fs.js"]}}
}
`), 0o644)
	out, serr, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "gemini:project", "--yes")
	if err != nil {
		t.Fatalf("init: %v\n%s\n%s", err, out, serr)
	}
	all := out + serr
	_, un, ok := strings.Cut(all, "not checked by init: review them before trusting this file:")
	un, _, _ = strings.Cut(un, "\n")
	for _, want := range []string{"tools.discoveryCommand", "tools.callCommand", "hooks", "mcpServers.fs (runs node ./tools/fs.js)"} {
		if !ok || !strings.Contains(un, want) {
			t.Errorf("the report does not name %s as not checked:\n%s", want, all)
		}
	}
	if strings.Contains(un, "theme") {
		t.Errorf("the report names a setting that starts nothing:\n%s", un)
	}
	if !strings.Contains(all, `its entry "sandbox" runs`) {
		t.Errorf("the report does not say which entry it speaks for:\n%s", all)
	}
}

// atk39b F2: serve refuses to run from an executable inside the checkout (--project) or the
// workspace (plain serve), where a sandboxed call could replace it; the message names the path
// and the fix. Catches serve-project-exe-in-checkout.
func TestServeExecutableInCheckout(t *testing.T) {
	onPATH(t)
	initHome(t)
	checkout := policy.RealPath(t.TempDir())
	t.Chdir(checkout)
	if _, serr, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "claude-code:project", "--yes"); err != nil {
		t.Fatalf("init: %v\n%s", err, serr)
	}
	real := selfExecutable
	t.Cleanup(func() { selfExecutable = real })
	inside := filepath.Join(checkout, "bin", "mcpsandbox")
	os.MkdirAll(filepath.Dir(inside), 0o755)
	os.WriteFile(inside, []byte("#!/bin/sh\n"), 0o755)
	selfExecutable = func() (string, error) { return inside, nil }
	if _, _, err := runCLI("serve", "--project", "--check"); err == nil || !strings.Contains(err.Error(), inside) || !strings.Contains(err.Error(), "Install mcpsandbox outside it") {
		t.Errorf("serve --project from %s: err = %v, want a refusal naming it and the fix", inside, err)
	}
	ws := policy.RealPath(t.TempDir())
	inWS := filepath.Join(ws, "tools", "mcpsandbox")
	os.MkdirAll(filepath.Dir(inWS), 0o755)
	os.WriteFile(inWS, []byte("#!/bin/sh\n"), 0o755)
	selfExecutable = func() (string, error) { return inWS, nil }
	pol := filepath.Join(t.TempDir(), "p.toml")
	if _, serr, err := runCLI("init", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--policy-out", pol, "--yes"); err != nil {
		t.Fatalf("init: %v\n%s", err, serr)
	}
	if _, _, err := runCLI("serve", "--policy", pol, "--check"); err == nil || !strings.Contains(err.Error(), inWS) {
		t.Errorf("serve from %s inside its workspace: err = %v, want a refusal naming it", inWS, err)
	}
	selfExecutable = real
	if _, serr, err := runCLI("serve", "--policy", pol, "--check"); err != nil {
		t.Errorf("serve from outside the workspace: %v\n%s", err, serr)
	}
}

// atk39b F2: a PATH entry ahead of the mcpsandbox found that a call could fill (relative ./bin,
// an empty one, a directory of the checkout) makes init --portable refuse, and serve --project
// refuse too, naming the entry and what to change. Catches
// init-portable-path-ahead.
func TestPortablePathAhead(t *testing.T) {
	bin := onPATH(t)
	initHome(t)
	checkout := policy.RealPath(t.TempDir())
	t.Chdir(checkout)
	rest := bin + string(os.PathListSeparator) + "/usr/bin"
	for _, ahead := range []string{"./bin", "bin", "", filepath.Join(checkout, "bin")} {
		t.Setenv("PATH", ahead+string(os.PathListSeparator)+rest)
		_, _, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "claude-code:project", "--yes")
		if err == nil || !strings.Contains(err.Error(), "PATH holds") || !strings.Contains(err.Error(), bin) {
			t.Errorf("PATH %q ahead: err = %v, want a refusal naming it and %s", ahead, err, bin)
		}
		if _, err := os.Stat(".mcp.json"); err == nil {
			t.Fatalf("PATH %q ahead: init wrote .mcp.json", ahead)
		}
	}
	t.Setenv("PATH", rest+string(os.PathListSeparator)+"./bin") // after the one found: no matter
	if _, serr, err := runCLI("init", "--portable", "--scheme", "allowlist", "--allow", "wc", "--client", "claude-code:project", "--yes"); err != nil {
		t.Fatalf("init with ./bin after mcpsandbox: %v\n%s", err, serr)
	}
	if _, serr, err := runCLI("serve", "--project", "--check"); err != nil {
		t.Fatalf("serve --project: %v\n%s", err, serr)
	}
	// the client's PATH, whatever started this serve (a bin/mcpsandbox a call wrote may start
	// the real one by its path): its next start looks mcpsandbox up there
	t.Setenv("PATH", "./bin"+string(os.PathListSeparator)+rest)
	if _, _, err := runCLI("serve", "--project", "--check"); err == nil || !strings.Contains(err.Error(), `"./bin"`) {
		t.Errorf("serve --project with ./bin ahead on PATH: err = %v, want a refusal naming it", err)
	}
}
