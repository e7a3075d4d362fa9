package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Trial30 F12: --client is checked before the policy-exists check (whose suggested command
// repeated the typo), and a near miss gets the client meant.
func TestInitChecksClientsFirst(t *testing.T) {
	pol := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(pol, []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ client, want string }{
		{"claud-code", `client "claud-code" is unknown: use one of`},
		{"claud-code", "(did you mean --client claude-code?)"},
		// other names users give clients (trial33 F13: "code" was taken for codex)
		{"code", "(did you mean --client vscode?)"},
		{"claude:user", "(did you mean --client claude-code, or --client claude-desktop?)"},
		{"gemini-cli", "(did you mean --client gemini?)"},
		{"cursor:global", `client cursor has no "global" scope`},
	} {
		_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--policy-out", pol, "--client", c.client, "--yes")
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "already exists") {
			t.Errorf("--client %s: %v, want %q", c.client, err, c.want)
		}
	}
}
