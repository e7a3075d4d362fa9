package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A server of the same name in another scope of the same client, different from the entry
// written (Claude Code's local scope in ~/.claude.json beside the user scope written now; Gemini
// CLI's project settings beside its user settings), is warned of before and after writing; the
// very same entry there, or a scope written in the same init, is not.
func TestPlanWarnsOfTheSameNameInAnotherScope(t *testing.T) {
	env := planEnv(t)
	proj, _ := filepath.EvalSymlinks(env.Project)
	claude := filepath.Join(env.Home, ".claude.json")
	os.WriteFile(claude, []byte(`{"projects": {"`+proj+`": {"mcpServers": {"sandbox": {"type": "stdio", "command": "/old/mcpsandbox", "args": ["serve"]}}}}}`), 0o644)
	gem := filepath.Join(env.Project, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(gem), 0o755)
	os.WriteFile(gem, []byte(`{"mcpServers": {"sandbox": {"command": "/old/mcpsandbox"}}}`), 0o644)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"claude-code:user", "gemini:user"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Shadows) != 2 || !strings.Contains(pl.Shadows[0], "Claude Code also has a different server named \"sandbox\" in its local scope") ||
		!strings.Contains(pl.Shadows[1], "Gemini CLI also has a different server named \"sandbox\" in its project scope") {
		t.Fatalf("warnings: %q", pl.Shadows)
	}
	// which of the two each client starts, said plainly (trial38 F1: "may not be" where Gemini
	// CLI's project settings always win): Claude Code's local scope wins over the user scope
	// written; Gemini CLI's project settings win over the user settings written.
	if !strings.Contains(pl.Shadows[0], "Claude Code starts the one in its local scope, NOT the one written now in its user scope") ||
		!strings.Contains(pl.Shadows[1], "Gemini CLI starts the one in its project scope, NOT the one written now in its user scope") ||
		strings.Contains(strings.Join(pl.Shadows, ""), "may not be") {
		t.Fatalf("which one runs: %q", pl.Shadows)
	}
	// Each names its own client's way to remove the other one (Gemini CLI's warning used to say
	// Claude Code's command).
	if !strings.Contains(pl.Shadows[0], "(claude mcp remove sandbox -s local)") || !strings.Contains(pl.Shadows[1], "(gemini mcp remove sandbox -s project)") ||
		strings.Contains(pl.Shadows[1], "claude") {
		t.Fatalf("how to remove the other server: %q", pl.Shadows)
	}
	var w bytes.Buffer
	pl.Preview(&w)
	if !strings.Contains(w.String(), "warning: Claude Code also has") {
		t.Errorf("the preview does not warn:\n%s", w.String())
	}

	// Written in both scopes by one init: the same entry, no conflict; the same entry already
	// in the other scope: none either.
	opts.Clients, opts.Force = []string{"claude-code:user", "claude-code:local"}, true
	if pl, err = NewPlan(opts); err != nil || len(pl.Shadows) != 0 {
		t.Fatalf("both scopes in one init: %v %q", err, pl.Shadows)
	}
	if _, err := Apply(pl.Clients.Changes); err != nil {
		t.Fatal(err)
	}
	opts.Clients = []string{"claude-code:user"}
	if pl, err = NewPlan(opts); err != nil || len(pl.Shadows) != 0 {
		t.Errorf("the same entry in the local scope: %v %q", err, pl.Shadows)
	}
}

// No warning where the "other scope" is no other server: Gemini CLI's project settings when
// the project is the home directory are the very file written, under whatever path (init run
// from ~ warned of the entry it had just replaced), and an entry in another scope that differs only by the user's
// own settings (trust, timeout) starts the same server. A different server there still warns.
func TestPlanShadowsOnlyAnotherServer(t *testing.T) {
	env := planEnv(t)
	env.Project = filepath.Join(t.TempDir(), "home") // the home by another path (a link, as cd may give it)
	if err := os.Symlink(env.Home, env.Project); err != nil {
		t.Fatal(err)
	}
	gem := filepath.Join(env.Home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(gem), 0o755)
	os.WriteFile(gem, []byte(`{"mcpServers": {"sandbox": {"command": "/old/mcpsandbox", "args": ["serve"], "timeout": 45000, "trust": true}}}`), 0o644)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"gemini:user"}, Force: true, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil || len(pl.Shadows) != 0 {
		t.Fatalf("the project is the home: its settings are the user's, written now: %v %q", err, pl.Shadows)
	}

	// Another project whose settings hold init's entry with the user's trust: the same server.
	env.Project = t.TempDir()
	opts.Env = env
	pl, err = NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Apply(pl.Clients.Changes); err != nil {
		t.Fatal(err)
	}
	written, _ := os.ReadFile(gem)
	proj := filepath.Join(env.Project, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(proj), 0o755)
	os.WriteFile(proj, written, 0o644) // the same entry, timeout and trust kept (TestForceKeepsTheUsersKeys)
	if pl, err = NewPlan(opts); err != nil || len(pl.Shadows) != 0 {
		t.Fatalf("the same server with the user's keys in the project scope: %v %q\n%s", err, pl.Shadows, written)
	}
	os.WriteFile(proj, bytes.Replace(written, []byte(`"serve"`), []byte(`"serve", "--log-level", "debug"`), 1), 0o644)
	if pl, err = NewPlan(opts); err != nil || len(pl.Shadows) != 1 {
		t.Fatalf("another server (other arguments) in the project scope: %v %q", err, pl.Shadows)
	}
}

// Cursor's user and project scopes asked for together when the project is the home directory
// are one file and one entry (~/.cursor/mcp.json): planned and reported once, with a note that
// says so, not as two places (trial27, #4). In another project they are two files.
func TestPlanOneEntryForTwoScopesThatAreOne(t *testing.T) {
	env := planEnv(t)
	env.Project = filepath.Join(t.TempDir(), "home") // the home by another path, as in ~ via a link
	if err := os.Symlink(env.Home, env.Project); err != nil {
		t.Fatal(err)
	}
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"cursor", "cursor:project"}, Force: true, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Clients.Targets) != 1 || len(pl.Clients.Changes) != 1 {
		t.Fatalf("planned %d targets, %d file changes, want 1 and 1: %+v", len(pl.Clients.Targets), len(pl.Clients.Changes), pl.Clients.Targets)
	}
	if len(pl.SameEntry) != 1 || !strings.Contains(pl.SameEntry[0], "cursor:user and cursor:project are the same entry here") ||
		!strings.Contains(pl.SameEntry[0], filepath.Join(env.Home, ".cursor", "mcp.json")) {
		t.Fatalf("the note: %q", pl.SameEntry)
	}
	var w bytes.Buffer
	pl.Preview(&w)
	if !strings.Contains(w.String(), "note: Cursor: cursor:user and cursor:project are the same entry here") {
		t.Errorf("the preview does not say so:\n%s", w.String())
	}

	env.Project = t.TempDir()
	opts.Env = env
	if pl, err = NewPlan(opts); err != nil || len(pl.Clients.Targets) != 2 || len(pl.SameEntry) != 0 {
		t.Fatalf("another project: %v, %d targets, notes %q", err, len(pl.Clients.Targets), pl.SameEntry)
	}
}

// Claude Code's user scope written now is not the server started in another project whose local
// scope has a different one of that name: ~/.claude.json keeps every project's, and init names
// those projects (trial32 F5); a project whose local entry is this one, is not named.
func TestPlanWarnsOfOtherProjectsLocalServers(t *testing.T) {
	env := planEnv(t)
	claude := filepath.Join(env.Home, ".claude.json")
	os.WriteFile(claude, []byte(`{"projects": {"/srv/a": {"mcpServers": {"sandbox": {"type": "stdio", "command": "/old/mcpsandbox", "args": ["serve"]}}}, `+
		`"/srv/b": {"mcpServers": {"other": {"command": "x"}}}}}`), 0o644)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"claude-code:user"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Shadows) != 1 || !strings.Contains(pl.Shadows[0], "local scope of 1 other project(s) (/srv/a)") || strings.Contains(pl.Shadows[0], "/srv/b") {
		t.Fatalf("warnings: %q", pl.Shadows)
	}
}

// The warning's way to give this entry another name fits the run: --name, which init refuses
// under --policy (the policy's name key names the entry there) and the wizard does not ask
// (trial33 F4). Red with mutant init-shadow-advice-name-flag.
func TestShadowAdviceNamesTheRunsWayToRename(t *testing.T) {
	env := planEnv(t)
	proj, _ := filepath.EvalSymlinks(env.Project)
	os.WriteFile(filepath.Join(env.Home, ".claude.json"), []byte(`{"projects": {"`+proj+`": {"mcpServers": {"sandbox": {"command": "/old/mcpsandbox"}}}}}`), 0o644)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"claude-code:user"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { return false, nil }}
	plain, err := NewPlan(opts)
	if err != nil || len(plain.Shadows) != 1 || !strings.HasSuffix(plain.Shadows[0], "or give this one another --name") {
		t.Fatalf("flags: %v %q", err, plain.Shadows)
	}
	wiz := opts
	wiz.Wizard = true
	if pl, err := NewPlan(wiz); err != nil || len(pl.Shadows) != 1 || strings.Contains(pl.Shadows[0], "another --name") ||
		!strings.Contains(pl.Shadows[0], "run init again as mcpsandbox init --name NAME (the wizard asks the rest)") {
		t.Errorf("wizard: %v %q", err, pl.Shadows)
	}
	if err := os.WriteFile(opts.PolicyOut, plain.PolicyFile.New, 0o644); err != nil {
		t.Fatal(err)
	}
	use := opts
	use.UsePolicy = true
	if pl, err := NewPlan(use); err != nil || len(pl.Shadows) != 1 || strings.Contains(pl.Shadows[0], "--name") ||
		!strings.Contains(pl.Shadows[0], `or give this one another name: set name = "…" in `+opts.PolicyOut) {
		t.Errorf("--policy: %v %q", err, pl.Shadows)
	}
}
