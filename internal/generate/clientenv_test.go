package generate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
)

// Each client starts a stdio server with an environment of its own making (measured with the
// real CLIs: Gemini CLI 0.61 drops every variable named like a secret, Codex 0.171 passes only
// a fixed list): init proves the entry with that environment, and a variable the entry names is
// passed through the client's own syntax.
func TestClientServerEnv(t *testing.T) {
	parent := []string{"PATH=/bin", "HOME=/h", "E2B_API_KEY=k", "OTHER=o", "GEMINI_CLI_X=1", "MY_TOKEN=t"}
	bare := ServerEntry{Command: "/b"}
	named := ServerEntry{Command: "/b", Env: []string{"E2B_API_KEY"}}
	for _, tc := range []struct {
		client      string
		e           ServerEntry
		has, hasNot []string
	}{
		{"gemini", bare, []string{"PATH=/bin", "HOME=/h", "OTHER=o", "GEMINI_CLI_X=1"}, []string{"E2B_API_KEY=k", "MY_TOKEN=t"}},
		{"gemini", named, []string{"E2B_API_KEY=k", "OTHER=o"}, []string{"MY_TOKEN=t"}},
		{"codex", bare, []string{"PATH=/bin", "HOME=/h"}, []string{"E2B_API_KEY=k", "OTHER=o", "GEMINI_CLI_X=1"}},
		{"codex", named, []string{"PATH=/bin", "E2B_API_KEY=k"}, []string{"OTHER=o", "MY_TOKEN=t"}},
		{"claude-code", bare, parent, nil},
		{"claude-desktop", named, parent, nil},
	} {
		got := client(t, tc.client).ServerEnv(parent, tc.e)
		for _, kv := range tc.has {
			if !slices.Contains(got, kv) {
				t.Errorf("%s %v: %s missing from %v", tc.client, tc.e.Env, kv, got)
			}
		}
		for _, kv := range tc.hasNot {
			if slices.Contains(got, kv) {
				t.Errorf("%s %v: %s passed, the client would not: %v", tc.client, tc.e.Env, kv, got)
			}
		}
	}
}

// The entry names the variable in each client's own syntax, never its value; a client whose
// config cannot name one gets nothing written and a note saying what to do.
func TestEntryNamesVariablesPerClient(t *testing.T) {
	e := ServerEntry{Command: "/b", Args: []string{"serve"}, Env: []string{"E2B_API_KEY"}}
	for id, want := range map[string]string{
		"claude-code": "${E2B_API_KEY}", "gemini": "${E2B_API_KEY}",
		"cursor": "${env:E2B_API_KEY}", "vscode": "${env:E2B_API_KEY}", "windsurf": "${env:E2B_API_KEY}",
	} {
		c := client(t, id)
		b, err := Merge(c, nil, "sandbox", e, false)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]map[string]struct{ Env map[string]string }
		if err := json.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v\n%s", id, err, b)
		}
		if got := doc[c.Key]["sandbox"].Env["E2B_API_KEY"]; got != want {
			t.Errorf("%s: env E2B_API_KEY = %q, want %q\n%s", id, got, want, b)
		}
	}
	b, err := Merge(client(t, "codex"), nil, "sandbox", e, false)
	var doc struct {
		MCPServers map[string]struct {
			EnvVars []string `toml:"env_vars"`
		} `toml:"mcp_servers"`
	}
	if err != nil || toml.Unmarshal(b, &doc) != nil || !slices.Equal(doc.MCPServers["sandbox"].EnvVars, []string{"E2B_API_KEY"}) {
		t.Errorf("codex: %v\n%s", err, b)
	}
	cd := client(t, "claude-desktop")
	if b, _ := Merge(cd, nil, "sandbox", e, false); strings.Contains(string(b), "E2B_API_KEY") {
		t.Errorf("claude-desktop cannot expand a variable, yet the entry names one:\n%s", b)
	}
	if n := cd.EnvNote(e.Env); !strings.Contains(n, "set E2B_API_KEY where Claude Desktop starts") {
		t.Errorf("claude-desktop note: %q", n)
	}
}

// The proof call: a server that answers initialize and tools/list but cannot run a call is
// refused, in its own words, and says whose environment it ran with.
func TestStartCheckProofCall(t *testing.T) {
	if os.Getenv("GENERATE_TEST_SERVER") != "" {
		t.Skip("the helper server runs in TestMain")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := ServerEntry{Command: self}
	env := append(os.Environ(), testServerEnv+"=1")
	call := &ProofCall{Tool: "probe", Args: map[string]any{"fail": true}}
	_, err = StartCheck(context.Background(), e, env, call, 20*time.Second)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "cannot run a call") || !strings.Contains(err.Error(), "the workspace is gone") {
		t.Fatalf("a failing call must fail the check: %v", err)
	}
	p, err := StartCheck(context.Background(), e, env, &ProofCall{Tool: "probe", Args: map[string]any{}}, 20*time.Second)
	if err != nil || p.Called != "probe" {
		t.Fatalf("a call that runs: %+v %v", p, err)
	}
}

// The serve init starts for its check is started with the origin mark (MCPSANDBOX_ORIGIN=
// init-check), whatever the environment it is given says, so its audit lines are told from the
// AI's (trial38 F2: init's --version calls read as the AI's). Red with mutant init-check-unmarked.
func TestStartCheckMarksItsServe(t *testing.T) {
	if os.Getenv("GENERATE_TEST_SERVER") != "" {
		t.Skip("the helper server runs in TestMain")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), testServerEnv+"=1", OriginEnv+"=something-else")
	if _, err := StartCheck(context.Background(), ServerEntry{Command: self}, env, &ProofCall{Tool: "probe", Args: map[string]any{"origin": true}}, 20*time.Second); err != nil {
		t.Fatalf("the check's serve was not started with the origin mark: %v", err)
	}
}

// The proof's Also calls are made and judged each, a tool error's words included: a check whose
// first call passes and a later one's program could not start fails, naming every one that
// failed and only those (trial37 F1: the allowlist's second command, a Go binary, could not start
// under the policy's memory, and init said it runs a call). Catches the mutant
// init-proof-first-only.
func TestStartCheckJudgesEveryCall(t *testing.T) {
	if os.Getenv("GENERATE_TEST_SERVER") != "" {
		t.Skip("the helper server runs in TestMain")
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e := ServerEntry{Command: self}
	env := append(os.Environ(), testServerEnv+"=1")
	judge := func(name string) func(ProofResult) error {
		return func(r ProofResult) error {
			switch {
			case r.ToolError != "":
				return fmt.Errorf("%s: %s", name, r.ToolError)
			case strings.Contains(r.Stderr, "fatal error"):
				return fmt.Errorf("%s cannot start (exit %d): %s", name, r.ExitCode, r.Stderr)
			}
			return nil
		}
	}
	call := func(name string, args map[string]any) *ProofCall {
		return &ProofCall{Tool: "probe", Args: args, Judge: judge(name)}
	}
	first := call("wc", map[string]any{})
	first.Also = []*ProofCall{
		call("go", map[string]any{"exit": 2, "stderr": "fatal error: failed to reserve page summary memory"}),
		call("grep", map[string]any{"exit": 2, "stderr": "usage: grep"}), // started: its own complaint
		call("gone", map[string]any{"fail": true}),
	}
	_, err = StartCheck(context.Background(), e, env, first, 20*time.Second)
	if err == nil {
		t.Fatal("a command that cannot start passed the check")
	}
	for _, w := range []string{"go cannot start (exit 2): fatal error: failed to reserve page summary memory", "gone: the workspace is gone"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the check's error does not say %q:\n%v", w, err)
		}
	}
	for _, w := range []string{"wc", "grep"} {
		if strings.Contains(err.Error(), w+" cannot start") || strings.Contains(err.Error(), w+":") {
			t.Errorf("the check's error names %s, which started:\n%v", w, err)
		}
	}
	first.Also = first.Also[1:2] // grep: started
	if _, err := StartCheck(context.Background(), e, env, first, 20*time.Second); err != nil {
		t.Errorf("a proof whose every call passes: %v", err)
	}
}

// A variable the entry sets to a value (the docker engine's address, trial33 F7) is written as
// that value in every client's entry, Claude Desktop's and Codex's too, and init's check runs with
// it whatever the environment init runs in: the client gets it so, wherever it starts.
func TestEntrySetsValuesPerClient(t *testing.T) {
	e := ServerEntry{Command: "/b", Args: []string{"serve"}, Env: []string{"E2B_API_KEY"}, Set: []string{"DOCKER_HOST=unix:///run/d.sock"}}
	for _, id := range []string{"claude-code", "claude-desktop", "gemini", "cursor", "vscode", "windsurf"} {
		c := client(t, id)
		b, err := Merge(c, nil, "sandbox", e, false)
		var doc map[string]map[string]struct{ Env map[string]string }
		if err != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("%s: %v\n%s", id, err, b)
		}
		if got := doc[c.Key]["sandbox"].Env["DOCKER_HOST"]; got != "unix:///run/d.sock" {
			t.Errorf("%s: env DOCKER_HOST = %q\n%s", id, got, b)
		}
		if env := c.ServerEnv([]string{"PATH=/bin", "DOCKER_HOST=unix:///elsewhere"}, e); !slices.Contains(env, "DOCKER_HOST=unix:///run/d.sock") || slices.Contains(env, "DOCKER_HOST=unix:///elsewhere") {
			t.Errorf("%s: the check's environment %q", id, env)
		}
	}
	b, err := Merge(client(t, "codex"), nil, "sandbox", e, false)
	var doc struct {
		MCPServers map[string]struct {
			Env     map[string]string `toml:"env"`
			EnvVars []string          `toml:"env_vars"`
		} `toml:"mcp_servers"`
	}
	if err != nil || toml.Unmarshal(b, &doc) != nil || doc.MCPServers["sandbox"].Env["DOCKER_HOST"] != "unix:///run/d.sock" ||
		!slices.Equal(doc.MCPServers["sandbox"].EnvVars, []string{"E2B_API_KEY"}) {
		t.Errorf("codex: %v\n%s", err, b)
	}
	if env := client(t, "codex").ServerEnv([]string{"PATH=/bin"}, e); !slices.Contains(env, "DOCKER_HOST=unix:///run/d.sock") {
		t.Errorf("codex: the check's environment %q", env)
	}
}
