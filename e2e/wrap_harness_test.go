//go:build linux

package e2e

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/hostile"
	wrapscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// hostileServer builds the malicious test server into a directory of its own under /var/tmp
// (wrap gives the server a private /tmp, which would hide a binary there; its install prefix,
// bin/.., is that directory alone).
func hostileServer(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := hostile.Build(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// wrapScenarios are the scenarios that attack a wrapped server.
func wrapScenarios(t *testing.T) []string {
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, s := range all {
		if wrapscheme.Scheme.Adapter.Offer().Applies(s) {
			ids = append(ids, s.ID)
		}
	}
	if len(ids) < 10 {
		t.Fatalf("only %d wrap scenarios: %v", len(ids), ids)
	}
	return ids
}

// TestWrapHarness is issue 26's acceptance of the hostile side: `harness --policy P` on a wrap
// policy whose [wrap].command runs the malicious test server contains every one of its attempts
// (judged from outside by the harness's detectors), and the wrap scheme's negative controls
// fire, each opening one layer (or staging the breach) under the same server.
func TestWrapHarness(t *testing.T) {
	bin := hostileServer(t)
	_, err := wrapscheme.Scheme.ControlPolicy()
	if err == nil || !strings.Contains(err.Error(), wrapscheme.HostileServerEnv) {
		t.Errorf("ControlPolicy without the hostile server: %v, want it to name %s", err, wrapscheme.HostileServerEnv)
	}
	t.Setenv(wrapscheme.HostileServerEnv, bin)
	p, err := wrapscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "wrap.toml")
	b, _ := policy.Marshal(p)
	write(t, file, string(b), 0o644)
	ids := wrapScenarios(t)
	out, stderr, code := runBin(t, "harness", "--policy", file, "--json", "-s", strings.Join(ids, ","))
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
	}
	for _, r := range rep.Results {
		if r.Outcome != harness.Contained {
			t.Errorf("%s: %s %s %v", r.ID, r.Outcome, r.Reason, r.Findings)
		}
	}
	if len(rep.Results) != len(ids) || code != 0 {
		t.Errorf("%d results for %d scenarios, exit %d", len(rep.Results), len(ids), code)
	}

	out, stderr, code = runBin(t, "harness", "--controls", "--scheme", wrapsec.Name, "--json")
	var rs []harness.ControlResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("controls --json: %v\n%s\n%s", err, out, stderr)
	}
	for _, r := range rs {
		if !r.Fired {
			t.Errorf("detector %s silent under its control (%s: %s): %s %s", r.Detector, r.Kind, r.Weakness, r.Outcome, r.Detail)
		}
	}
	if len(rs) < len(ids) || code != 0 {
		t.Errorf("%d controls, exit %d: %s", len(rs), code, stderr)
	}
}
