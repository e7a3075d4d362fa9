package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A policy edited by hand gets one more client: init --policy FILE --client X writes only that
// client's entry, running serve with the file as it is (byte for byte: its comments and values
// stay), after starting the entry and making a trial call through it. Before, the same flags
// with --scheme refused the existing file, and --force replaced it and the edits (trial19).
// Policy-shaping flags, a file that does not load and a missing --client are refused, and
// nothing is written.
func TestInitPolicyAddsAClientAndLeavesThePolicy(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ai-workspace")
	if out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "claude-code:user", "--yes"); code != 0 {
		t.Fatalf("init exit %d: %s %s", code, out, stderr)
	}
	path := filepath.Join(e.config, "mcpsandbox", "policy.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	edited := append(bytes.Replace(b, []byte(`max_concurrent   = 4`), []byte(`max_concurrent = 2 # two at once: edited by hand`), 1), "\n# my own note\n"...)
	if bytes.Equal(edited, append(b, "\n# my own note\n"...)) {
		t.Fatalf("the policy init wrote has no max_concurrent line to edit:\n%s", b)
	}
	if err := os.WriteFile(path, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	cursor := filepath.Join(e.home, ".cursor", "mcp.json")
	for _, bad := range [][]string{
		{"--policy", path, "--scheme", "allowlist", "--client", "cursor"},
		{"--policy", path, "--timeout", "10s", "--client", "cursor"},
		{"--policy", path},
		{"--policy", filepath.Join(e.home, "none.toml"), "--client", "cursor"},
	} {
		if out, stderr, code := e.run(t, "", bad...); code == 0 {
			t.Errorf("init %s: exit 0, want a refusal: %s %s", strings.Join(bad, " "), out, stderr)
		}
		if _, err := os.Stat(cursor); err == nil {
			t.Fatalf("init %s wrote Cursor's config", strings.Join(bad, " "))
		}
	}
	out, stderr, code := e.run(t, "", "--policy", path, "--client", "cursor")
	if code != 0 {
		t.Fatalf("init --policy exit %d: %s %s", code, out, stderr)
	}
	if !strings.Contains(out, "checked: the entry starts and answers MCP, and runs a call") {
		t.Errorf("init --policy did not say it started the entry and made a call:\n%s", out)
	}
	if now, _ := os.ReadFile(path); !bytes.Equal(now, edited) {
		t.Fatalf("init --policy changed the policy file:\n%s", now)
	}
	var cfg struct {
		MCPServers map[string]struct {
			Command string
			Args    []string
		}
	}
	raw, err := os.ReadFile(cursor)
	if err != nil || json.Unmarshal(raw, &cfg) != nil {
		t.Fatalf("Cursor's config: %v\n%s", err, raw)
	}
	entry := cfg.MCPServers["sandbox"]
	if want := []string{"serve", "--policy", path}; !filepath.IsAbs(entry.Command) || strings.Join(entry.Args, " ") != strings.Join(want, " ") {
		t.Fatalf("Cursor's entry %+v, want %s running %v", entry, binPath, want)
	}
	// The bad file: refused with its line, nothing written.
	bad := filepath.Join(e.home, "bad.toml")
	os.WriteFile(bad, []byte("version = 1\nscheme = \"allowlist\"\n[limits]\ntimeout = 5\n"), 0o644)
	if _, stderr, code := e.run(t, "", "--policy", bad, "--client", "gemini"); code == 0 || !strings.Contains(stderr, "bad.toml:4") {
		t.Errorf("a policy that does not load: exit %d, stderr %s (want its file:line)", code, stderr)
	}
}
