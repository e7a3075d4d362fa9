package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestInitPolicyOfAWrapPolicySaysSo: init --policy FILE of a wrap policy is refused in the
// file's words (it is a wrap policy, whose entries init --wrap writes), not as a --scheme wrap
// the user never typed (trial32 F8).
func TestInitPolicyOfAWrapPolicySaysSo(t *testing.T) {
	file := filepath.Join(t.TempDir(), "w.toml")
	if err := os.WriteFile(file, []byte("version = 1\nscheme = \"wrap\"\nname = \"everything\"\n[wrap]\ncommand = [\"npx\", \"-y\", \"@modelcontextprotocol/server-everything\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := runCLI("init", "--policy", file, "--client", "cursor", "--print", "--yes")
	want := file + ` is a wrap policy (scheme = "wrap"), whose client entries are the wrapped server's own, rewritten by mcpsandbox init --wrap; ` +
		"init --policy gives clients allowlist, docker or e2b policies"
	if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "--scheme") {
		t.Fatalf("init --policy of a wrap policy: %v\nwant %q and no --scheme", err, want)
	}
}
