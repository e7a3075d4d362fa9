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

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
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
	if err == nil || !strings.Contains(string(o), "e2b's attacks run in a real E2B sandbox on your account; set MCPSANDBOX_E2B_LIVE=1 to run them (it uses sandbox time); "+
		"or, offline against a local E2B server, use a test build (go build -tags testhooks ./cmd/mcpsandbox)") {
		t.Errorf("release build, harness --scheme e2b offline: %v\n%s", err, o)
	}
	releaseVerifyE2B(t, release.path, dir, env)
}

// releaseVerifyE2B: the release build's verify on an e2b policy, with a key set as an e2b user
// has it, reports the audit and the host and says the harness was not run and how to run it,
// never a test build, exit 0 (trial32 F11: it stopped at once with the test build's hint, exit 1).
func releaseVerifyE2B(t *testing.T, bin, dir string, env []string) {
	t.Helper()
	pol := filepath.Join(dir, "e2b.toml")
	if err := os.WriteFile(pol, []byte("version = 1\nscheme = \"e2b\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const key = "e2b_0000000000000000000000000000000000000000"
	// verify's host row asks E2B's API with the key (trial37 F7): this test's local E2B server
	fake, err := e2bfake.New(e2bfake.Options{APIKey: key})
	if err != nil {
		t.Fatal(err)
	}
	defer fake.Close()
	cmd := exec.Command(bin, "verify", "--policy", pol)
	cmd.Env = append(env, "E2B_API_KEY="+key, "E2B_API_URL="+fake.URL())
	o, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("release build, verify on an e2b policy: %v, want exit 0\n%s", err, o)
	}
	for _, want := range []string{"1. Policy audit\n", "MS303", "2. Host\n", "ok  e2b api ",
		"3. Harness not run: e2b's attacks run in a real E2B sandbox on your account; set MCPSANDBOX_E2B_LIVE=1 to run them (it uses sandbox time)\n",
		"verify: PASS (the audit and the host; the harness was not run)"} {
		if !strings.Contains(string(o), want) {
			t.Errorf("release build, verify on an e2b policy: the output lacks %q:\n%s", want, o)
		}
	}
	if strings.Contains(string(o), "testhooks") {
		t.Errorf("release build, verify on an e2b policy sends its user to a test build:\n%s", o)
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
