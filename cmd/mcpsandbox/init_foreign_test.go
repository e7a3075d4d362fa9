package main

import (
	"strings"
	"testing"
)

// Trial30 F11: a flag of another scheme than the one chosen is refused before anything is
// checked or written (docker with allowlist's --workspace mounted nothing, without a word),
// naming the chosen scheme's flag of the same role where it has one.
func TestInitRefusesAnotherSchemesFlag(t *testing.T) {
	for _, c := range []struct {
		scheme string
		flag   []string
		want   string
	}{
		{"docker", []string{"--workspace", "/tmp/ws"}, "--workspace is the allowlist scheme's; for docker use --docker-workspace DIR"},
		{"docker", []string{"--allow", "wc"}, "--allow is the allowlist scheme's: docker has no such setting, drop it"},
		{"docker", []string{"--reuse", "session"}, "--reuse is the e2b scheme's; for docker use --docker-reuse call|session"},
		{"docker", []string{"--e2b-template", "t"}, "--e2b-template is the e2b scheme's; for docker use --image IMAGE"},
		{"allowlist", []string{"--image", "python:3.12-slim"}, "--image is the docker scheme's: allowlist has no such setting"},
		{"allowlist", []string{"--docker-workspace", "/tmp/ws"}, "--docker-workspace is the docker scheme's; for allowlist use --workspace DIR"},
		{"allowlist", []string{"--pool", "2"}, "--pool is the docker scheme's: allowlist has no such setting"},
		{"allowlist", []string{"--api-key-env", "K"}, "--api-key-env is the e2b scheme's"},
		{"e2b", []string{"--docker-workspace-writable"}, "--docker-workspace-writable is the docker scheme's: e2b has no such setting"},
		{"e2b", []string{"--image", "x"}, "--image is the docker scheme's; for e2b use --e2b-template TEMPLATE"},
		{"e2b", []string{"--docker-reuse", "call"}, "--docker-reuse is the docker scheme's; for e2b use --reuse call|session"},
		{"e2b", []string{"--workspace", "/tmp/ws"}, "--workspace is the allowlist scheme's: e2b has no such setting"},
	} {
		args := append([]string{"init", "--scheme", c.scheme, "--yes", "--print", "--policy-out", t.TempDir() + "/p.toml"}, c.flag...)
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err = %v, want %q", args, err, c.want)
		}
	}
	// the scheme's own flags stay (this fails later, on the missing command, not on the flag)
	_, _, err := runCLI("init", "--scheme", "allowlist", "--yes", "--workspace", "/tmp/ws")
	if err == nil || strings.Contains(err.Error(), "scheme's") {
		t.Errorf("allowlist's own --workspace: %v", err)
	}
	// with --policy FILE every scheme flag is refused as before, whichever scheme it is
	_, _, err = runCLI("init", "--policy", "/nonexistent/p.toml", "--image", "x", "--client", "cursor", "--yes")
	if err == nil || !strings.Contains(err.Error(), "--image does not go with --policy") {
		t.Errorf("--policy with --image: %v", err)
	}
}
