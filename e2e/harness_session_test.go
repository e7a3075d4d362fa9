package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	dockerscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// sessionScenarios are the scenarios that attack one session of a serve from another.
var sessionScenarios = []string{"session-python-variables", "session-tmp-files", "session-processes",
	"session-concurrent", "session-cap", "session-serve-killed"}

// The harness drives a docker.reuse = "session" policy (no refusal any more): every session-*
// scenario is CONTAINED, each decided by its session detector with the start of every step
// proven, and scenarios written for per-call sandboxes keep their meaning (each of their calls
// gets a session of its own, ended with the call: nothing outlives it, no state reaches the next).
// The same scenarios are n/a under reuse = "call". The mutants docker-session-shared (b sees a's
// secret), docker-session-cap (a third session served) and docker-session-end (the ended
// session's container keeps its processes) turn this test red.
func TestHarnessDockerSessions(t *testing.T) {
	parallel(t)
	needDocker(t)
	p, err := dockerscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	dksec.Of(p).Reuse, dksec.Of(p).MaxSessions = "session", 2
	p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	ids := append(slices.Clone(sessionScenarios), "cross-call-leak", "disguised-survivor")
	rs := runScenarios(t, dockerscheme.Scheme, p, ids...)
	for _, id := range ids {
		r := rs[id]
		if r.Outcome != harness.Contained {
			t.Errorf("%s: %s %s; findings %+v; started %v", id, r.Outcome, r.Reason, r.Findings, r.Started)
			continue
		}
		for _, f := range r.Findings {
			if harness.SessionDetector(f.Detector) {
				t.Logf("%s: %s: %s", id, f.Detector, f.Detail)
			}
		}
	}
	dksec.Of(p).Reuse, dksec.Of(p).MaxSessions = "call", 0
	rs = runScenarios(t, dockerscheme.Scheme, p, sessionScenarios...)
	for _, id := range sessionScenarios {
		if r := rs[id]; r.Outcome != harness.NotApplicable || !strings.Contains(r.Reason, "per MCP session") {
			t.Errorf("reuse = call: %s %s %q, want n/a", id, r.Outcome, r.Reason)
		}
	}
}

// Every session detector fires under its negative control (the docker scheme's own, as
// `harness --controls --scheme docker` runs them).
func TestHarnessDockerSessionControls(t *testing.T) {
	parallel(t)
	needDocker(t)
	var ctrls []harness.Control
	for _, c := range dockerscheme.Scheme.Controls() {
		if harness.SessionDetector(c.Detector) {
			ctrls = append(ctrls, c)
		}
	}
	if len(ctrls) != 4 {
		t.Fatalf("%d session controls, want one per session detector (4)", len(ctrls))
	}
	base, err := dockerscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	base.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	rs, err := harness.RunControls(context.Background(), ctrls, harness.Options{Binary: binPath, Policy: base, Adapter: dockerscheme.Scheme.Adapter, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if !r.Fired {
			t.Errorf("detector %s silent under its control (%s on %s): %s %s", r.Detector, r.Weakness, r.Scenario, r.Outcome, r.Detail)
		} else {
			t.Logf("%s fired on %s: %s", r.Detector, r.Scenario, r.Detail)
		}
	}
}
