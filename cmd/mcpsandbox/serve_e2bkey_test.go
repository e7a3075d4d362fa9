package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trial37 F14: serve with an e2b policy and no API key logged "serving" and connected the
// client's session before ending for the key. It now ends before saying so, with the key's
// message and its fix. Red with mutant serve-e2b-key-unchecked.
func TestServeWithoutE2BKeySaysSoBeforeServing(t *testing.T) {
	t.Setenv("E2B_API_KEY", "")
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	pol := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"e2b\"\n[e2b]\nreuse = \"session\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI("serve", "--policy", pol)
	if err == nil || !strings.Contains(err.Error(), "not serving: the E2B API key variable $E2B_API_KEY is empty or unset") ||
		!strings.Contains(err.Error(), "export E2B_API_KEY=") {
		t.Errorf("serve without the key: %v", err)
	}
	if strings.Contains(stderr, "msg=serving") {
		t.Errorf("serve said it was serving without the key:\n%s", stderr)
	}
}
