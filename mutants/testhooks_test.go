package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"
	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A release build carries nothing test-only (internal/testhooks): no fake E2B server, no
// stand-in hook that re-opens loopback in the egress proxy, no benchmark, neither by name nor
// by code. The
// test build (the control) carries all of them, so their absence above is not a typo.
func TestReleaseBinaryHasNoTestHooks(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	release := buildBinary(t, root, dir, "release")
	markers := [][]byte{
		[]byte("MCPSANDBOX_EGRESS_STANDINS"),          // the hook's variable (strings)
		[]byte("MCPSANDBOX_TEST_START_GARBAGE"),       // the start-garbage hook's variable
		[]byte("internal/serve/egress.ParseStandIns"), // the code that re-opens the stand-ins (nm)
		[]byte("mcpsandbox/internal/harness/e2bfake"), // the fake E2B server (nm)
		[]byte("internal/schemes/allowlist.callRows"), // the schemes' bench rows (scheme.Scheme.Bench, nm)
		[]byte("internal/schemes/docker.benchEngine"),
	}
	for _, m := range markers {
		if bytes.Contains(release.bytes, m) {
			t.Errorf("the release binary contains %q: test-only code belongs behind the testhooks build tag", m)
		}
	}
	test := buildBinary(t, root, dir, "testhooks", "-tags", "testhooks")
	for _, m := range markers {
		if !bytes.Contains(test.bytes, m) {
			t.Errorf("control: the test build lacks %q, so its absence above proves nothing", m)
		}
	}

	// The release build's harness says what it cannot prove without the hooks: a stand-in
	// scenario is N/A with the reason (never CONTAINED), and the e2b scheme offline is refused
	// before any scenario runs, naming the test build and the live alternative.
	home := t.TempDir()
	env := append(os.Environ(), "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "MCPSANDBOX_E2B_LIVE=")
	p, err := allowlist.Default(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	n, err := policy.NetworkHosts("example.test")
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(n)
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(dir, "hosts.toml")
	if err := os.WriteFile(pol, b, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(release.path, "harness", "--policy", pol, "--scenario", "egress-listed-host,egress-unlisted-host", "--json")
	cmd.Env = env
	out, err := cmd.Output()
	var rep struct {
		Results []struct{ ID, Outcome, Reason string } `json:"results"`
	}
	if jerr := json.Unmarshal(out, &rep); jerr != nil || len(rep.Results) != 2 {
		t.Fatalf("harness --json on the release binary: %v %v\n%s", err, jerr, out)
	}
	for _, r := range rep.Results {
		if r.Outcome != "N/A" || r.Reason != testhooks.NeedsTestBuild {
			t.Errorf("release build, %s: %s %q, want N/A %q", r.ID, r.Outcome, r.Reason, testhooks.NeedsTestBuild)
		}
	}
	cmd = exec.Command(release.path, "harness", "--default", "--scheme", "e2b", "--scenario", "sleep-past-timeout")
	cmd.Env = env
	o, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(o), "the offline E2B server is in test builds only: go build -tags testhooks ./cmd/mcpsandbox, or set MCPSANDBOX_E2B_LIVE=1") {
		t.Errorf("release build, harness --scheme e2b offline: %v\n%s", err, o)
	}
}

type binary struct {
	path  string
	bytes []byte // the file, then go tool nm's listing
}

// buildBinary builds ./cmd/mcpsandbox as dir/name with the go build flags given.
func buildBinary(t *testing.T, root, dir, name string, flags ...string) binary {
	t.Helper()
	out := filepath.Join(dir, name)
	args := append(append([]string{"build"}, flags...), "-o", out, "./cmd/mcpsandbox")
	cmd := exec.Command("go", args...)
	cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %v: %v\n%s", flags, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	nm, err := exec.Command("go", "tool", "nm", out).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	return binary{path: out, bytes: append(b, nm...)}
}
