package generate

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Init run again after the client re-rendered its config (Claude Code saves all of
// ~/.claude.json in its own layout whenever it starts: one args item a line) finds the very same
// entry, not "a different server": nothing to change, and the file stays as the client wrote it.
// A different entry of that name is still a conflict. Codex's TOML re-rendered likewise.
func TestSameEntryRerenderedByTheClient(t *testing.T) {
	dir := t.TempDir()
	proj := filepath.Join(dir, "proj")
	e := NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/.config/mcpsandbox/policy.toml")
	claude := `{
  "projects": {
    "` + proj + `": {
      "mcpServers": {
        "sandbox": {
          "command": "/home/me/bin/mcpsandbox",
          "args": [
            "serve",
            "--policy",
            "/home/me/.config/mcpsandbox/policy.toml"
          ],
          "type": "stdio"
        }
      }
    }
  },
  "firstStartTime": "2026-12-02T08:58:34.835Z",
  "userID": "f34b"
}
`
	p := filepath.Join(dir, ".claude.json")
	os.WriteFile(p, []byte(claude), 0o600)
	cc := client(t, "claude-code")
	cc.KeyPath = []string{"projects", proj, "mcpServers"}
	c, err := ClientChange(Target{Client: cc, Scope: "local", Path: p}, "sandbox", e, false)
	if err != nil || !c.Unchanged() || string(c.New) != claude {
		t.Fatalf("the same entry re-rendered by Claude Code: %v, unchanged %v\n%s", err, c.Unchanged(), c.New)
	}
	other := NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/.config/mcpsandbox/docker.toml")
	if _, err := ClientChange(Target{Client: cc, Scope: "local", Path: p}, "sandbox", other, false); !errors.Is(err, ErrExists) {
		t.Fatalf("a different entry of the same name: %v, want ErrExists", err)
	}

	codex := "model = \"x\"\n\n[mcp_servers.sandbox]\ncommand = \"/home/me/bin/mcpsandbox\"\nargs = [\n  \"serve\",\n  \"--policy\",\n  \"/home/me/.config/mcpsandbox/policy.toml\",\n]\n"
	cp := filepath.Join(dir, "config.toml")
	os.WriteFile(cp, []byte(codex), 0o600)
	c, err = ClientChange(Target{Client: client(t, "codex"), Scope: "user", Path: cp}, "sandbox", e, false)
	if err != nil || !c.Unchanged() {
		t.Fatalf("the same entry re-rendered in Codex's TOML: %v\n%s", err, c.New)
	}
	if _, err := ClientChange(Target{Client: client(t, "codex"), Scope: "user", Path: cp}, "sandbox", other, false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "different server") {
		t.Fatalf("a different Codex entry of the same name: %v", err)
	}
}

// A relative workspace is taken from the current directory, as --policy-out is (it used to be
// refused: "is not absolute: give a full path"); ~/ is the home directory; CheckWorkspace then
// judges the absolute path.
func TestWorkspacePathRelative(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	t.Chdir(dir)
	cwd, _ := os.Getwd()
	for in, want := range map[string]string{
		"ws": filepath.Join(cwd, "ws"), "./my ws": filepath.Join(cwd, "my ws"), "../x": filepath.Join(filepath.Dir(cwd), "x"),
		"~/ai": filepath.Join(home, "ai"), "/abs/ws": "/abs/ws", "": "",
	} {
		got := WorkspacePath(in, home)
		if got != want {
			t.Errorf("WorkspacePath(%q) = %q, want %q", in, got, want)
		}
		if in != "" && in != "/abs/ws" {
			if err := CheckWorkspace(got, home); err != nil {
				t.Errorf("CheckWorkspace(WorkspacePath(%q)): %v", in, err)
			}
		}
	}
}

// The "checked" line names the clients sharing one environment as a sentence does ("Cursor,
// VS Code and Windsurf give it", not "Cursor and VS Code and Windsurf gives it"), and a client's
// own step is said once when init writes two of its scopes (gemini and gemini:project).
func TestReportWording(t *testing.T) {
	env := planEnv(t)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"cursor", "vscode:user", "windsurf", "gemini", "gemini:project"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	runs := pl.ProofRuns([]string{"PATH=/usr/bin", "HOME=/h", "MY_TOKEN=x"}) // Gemini CLI drops MY_TOKEN
	if len(runs) != 2 || runs[0].Who != "Cursor, VS Code and Windsurf" || runs[1].Who != "Gemini CLI" {
		t.Fatalf("proof runs: %+v", runs)
	}
	if got := describeProbe(Probe{Env: runs[0].Who}); !strings.Contains(got, "the environment Cursor, VS Code and Windsurf give it") {
		t.Errorf("several clients: %q", got)
	}
	if got := describeProbe(Probe{Env: "Gemini CLI"}); !strings.Contains(got, "the environment Gemini CLI gives it") {
		t.Errorf("one client: %q", got)
	}
	if got := (&StartError{Run: runs[0], Entry: pl.Entry, Err: errors.New("x")}).Error(); !strings.Contains(got, "as Cursor, VS Code and Windsurf start it") {
		t.Errorf("a failed start, several clients: %q", got)
	}
	var w bytes.Buffer
	pl.Report(&w, &Written{})
	if n := strings.Count(w.String(), "starts MCP servers (stdio and HTTP, its user-level ones too) only in folders you trust"); n != 1 {
		t.Errorf("Gemini CLI's step said %d times:\n%s", n, w.String())
	}
}
