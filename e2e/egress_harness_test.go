package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	allowlistscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"
	dockerscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Network by name, proved by the harness with the release binary: `harness --policy` on a
// policy with a host list runs every egress-* scenario against stand-in hosts on loopback
// (serve's proxy reaches them through the MCPSANDBOX_EGRESS_STANDINS hook) and each is
// contained; the same scenarios are n/a on a policy without a host list; and the egress
// controls (list widened, proxy bypassed, list narrowed) make their detectors fire. No byte
// leaves this machine: the only names the proxy resolves are the stand-ins'.

// egressScenarios are the network-by-name scenarios, from the embedded set.
func egressScenarios(t *testing.T) []string {
	t.Helper()
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		if s.NeedsHostList {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) < 9 {
		t.Fatalf("%d network-by-name scenarios: %v", len(ids), ids)
	}
	return ids
}

func writePolicy(t *testing.T, p *policy.Policy) string {
	t.Helper()
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// harnessJSON runs `harness --policy path --scenario ids --json` and decodes the report.
func harnessJSON(t *testing.T, path string, ids []string) (*harness.Report, int) {
	t.Helper()
	out, stderr, code := runBin(t, "harness", "--policy", path, "--scenario", strings.Join(ids, ","), "--json", "--max-timeout", "10s", "--parallel", "3")
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
	}
	return &rep, code
}

func checkEgressHarness(t *testing.T, sc *scheme.Scheme, withHosts, without *policy.Policy) {
	ids := egressScenarios(t)
	rep, code := harnessJSON(t, writePolicy(t, withHosts), append(slices.Clone(ids), "proxy-allowlist-bypass", "tcp-exfil-loopback"))
	if code != 0 || !rep.OK() {
		t.Errorf("host-list policy: exit %d, %s", code, rep.Summary())
	}
	for _, r := range rep.Results {
		if r.Outcome != harness.Contained {
			t.Errorf("%s: %s %s %+v", r.ID, r.Outcome, r.Reason, r.Findings)
		}
	}
	for _, r := range rep.Results {
		if r.ID == "egress-listed-host" && !slices.ContainsFunc(r.Findings, func(f harness.Finding) bool {
			return f.Detector == "allowed_host" && !f.Breach && strings.Contains(f.Detail, "answered")
		}) {
			t.Errorf("egress-listed-host: the listed stand-in's fetch is not proven: %+v", r.Findings)
		}
	}

	// without a host list: n/a, never "contained"
	rep, code = harnessJSON(t, writePolicy(t, without), ids)
	if code != 0 || rep.Counts.NotApplicable != len(ids) {
		t.Errorf("no host list: exit %d, %s (want all %d n/a)", code, rep.Summary(), len(ids))
	}
	for _, r := range rep.Results {
		if r.Outcome != harness.NotApplicable || !strings.Contains(r.Reason, "host list") {
			t.Errorf("no host list: %s %s %q", r.ID, r.Outcome, r.Reason)
		}
	}

	// the egress controls are among the scheme's (what `harness --controls` runs) and fire
	var ctrls []harness.Control
	for _, c := range sc.Controls() {
		if strings.HasPrefix(c.Scenario, "egress-") {
			ctrls = append(ctrls, c)
		}
	}
	var got []string
	for _, c := range ctrls {
		got = append(got, c.Detector+"@"+c.Scenario)
	}
	slices.Sort(got)
	want := []string{"allowed_host@egress-listed-host", "forbidden_host@egress-bypass-direct", "forbidden_host@egress-unlisted-host"}
	if !slices.Equal(got, want) {
		t.Fatalf("egress controls %v, want %v", got, want)
	}
	base, err := sc.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	opts := harness.Options{Binary: binPath, Policy: base, Adapter: sc.Adapter, Parallel: 2}
	rs, err := harness.RunControls(context.Background(), ctrls, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rs {
		// a control whose step only started on a second try ran on a machine too slow for the
		// control policy's 6 s (make test's other packages beside it): its detector is judged on
		// one more run, said in the log, not on that one
		if !r.Fired && strings.Contains(r.Detail, "on a second try") {
			t.Logf("control %s@%s ran on a starved machine (%s): once more", r.Detector, r.Scenario, r.Detail)
			again, err := harness.RunControls(context.Background(), []harness.Control{r.Control}, opts)
			if err != nil {
				t.Fatal(err)
			}
			rs[i] = again[0]
		}
	}
	for _, r := range rs {
		if !r.Fired {
			t.Errorf("detector %s silent under its control (%s on %s): %s %s", r.Detector, r.Weakness, r.Scenario, r.Outcome, r.Detail)
		} else {
			t.Logf("control fired: %s (%s): %s", r.Detector, r.Weakness, r.Detail)
		}
	}
}

func TestEgressHarnessDocker(t *testing.T) {
	parallel(t)
	needDocker(t)
	if testing.Short() {
		t.Skip("SKIP in -short: runs about 15 docker scenarios and 3 controls")
	}
	with := policy.Default(dksec.Name)
	dksec.Of(with).Image = dockerImage()
	with.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	hosts, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org")
	if err != nil {
		t.Fatal(err)
	}
	without := with.Clone()
	dksec.Of(with).SetNet(hosts)
	checkEgressHarness(t, dockerscheme.Scheme, with, without)
}

func TestEgressHarnessAllowlist(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs about 11 allowlist scenarios and 3 controls")
	}
	base, err := allowlistscheme.Scheme.ControlPolicy()
	if err != nil {
		securitySkip(t, "the allowlist controls' policy: %v", err)
	}
	with := base.Clone()
	with.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	hosts, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org")
	if err != nil {
		t.Fatal(err)
	}
	without := with.Clone()
	alsec.Of(with).SetNet(hosts)
	checkEgressHarness(t, allowlistscheme.Scheme, with, without)
}
