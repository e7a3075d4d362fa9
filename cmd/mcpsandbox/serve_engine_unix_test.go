//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// trial35 F7: serve with a docker policy and no engine said "serving" and connected the client's
// session, then ended without answering it (the client: "connected", "tools fetch failed"). It
// now ends before saying so, with the reason and its fix. Red with mutant serve-engine-unchecked.
func TestServeWithoutEngineSaysSoBeforeServing(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "none.sock"))
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	pol := filepath.Join(t.TempDir(), "p.toml")
	if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"docker\"\n[docker]\nimage = \"debian:bookworm-slim\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, err := runCLI("serve", "--policy", pol)
	if err == nil || !strings.Contains(err.Error(), "not serving: the docker scheme needs a Docker engine") || !strings.Contains(err.Error(), "start Docker") {
		t.Errorf("serve without an engine: %v", err)
	}
	if strings.Contains(stderr, "msg=serving") {
		t.Errorf("serve said it was serving without an engine:\n%s", stderr)
	}
}
