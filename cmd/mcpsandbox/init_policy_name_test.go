package main

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
)

// TestInitPolicyNameSaysWhereTheNameIs: init --policy FILE --name X is refused (the entry is
// named by the policy), and the refusal says so: the policy's name key, not "edit the file for
// its settings" (trial22: a user adding a second server to a client that has a "sandbox" was
// left to guess that the entry's name is the policy's name key).
func TestInitPolicyNameSaysWhereTheNameIs(t *testing.T) {
	o := &InitOptions{Policy: "/nonexistent/p.toml", given: []string{"client", "name"}}
	err := usePolicy(o, generate.Env{Home: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), `name = "…"`) || !strings.Contains(err.Error(), "/nonexistent/p.toml") {
		t.Fatalf("want the refusal to name the policy's name key in the file: %v", err)
	}
}
