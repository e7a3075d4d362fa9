package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A Go binary allowlisted by init starts: init writes the limits.memory its runtime needs and
// says so. The same policy edited back to 256MiB (RLIMIT_AS, under which the Go runtime cannot
// reserve its page summary) is refused by init's trial call, which asks every command, naming the
// command, what it said and the memory to write; nothing is written (trial37 F1: init said
// "runs a call" and every go call failed).
func TestInitTrialAsksEveryCommandUnderTheLimits(t *testing.T) {
	gofmt := "/usr/local/go/bin/gofmt"
	if _, err := os.Stat(gofmt); err != nil {
		t.Skipf("no Go binary to allowlist: %v", err)
	}
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ai-workspace")
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,"+gofmt, "--workspace", ws, "--client", "claude-code:user", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d: %s %s", code, out, stderr)
	}
	if said := out + stderr; !strings.Contains(said, "limits.memory is 1GiB, raised from 256MiB: under 256MiB, gofmt (a Go program") {
		t.Errorf("init did not say it raised limits.memory for gofmt:\n%s", said)
	}
	path := filepath.Join(e.config, "mcpsandbox", "policy.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	mem := regexp.MustCompile(`(?m)^memory *= "1GiB"`)
	if !mem.Match(b) {
		t.Fatalf("the policy init wrote has no memory = \"1GiB\":\n%s", b)
	}
	if err := os.WriteFile(path, mem.ReplaceAll(b, []byte(`memory = "256MiB"`)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = e.run(t, "", "--policy", path, "--client", "cursor")
	said := out + stderr
	if code == 0 {
		t.Fatalf("init --policy with a Go binary under 256MiB: exit 0:\n%s", said)
	}
	for _, w := range []string{`"command":"gofmt"`, "gofmt cannot start under this policy's limits", "failed to reserve page summary memory", `set memory = "1GiB" under [limits]`} {
		if !strings.Contains(said, w) {
			t.Errorf("init's refusal does not say %q:\n%s", w, said)
		}
	}
	if _, err := os.Stat(filepath.Join(e.home, ".cursor", "mcp.json")); err == nil {
		t.Error("init wrote Cursor's config for an entry whose command cannot start")
	}
}
