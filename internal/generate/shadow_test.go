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
