package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	allowlistscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"
	dockerscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// runScenarios runs the named scenarios against the policy with the scheme's adapter.
func runScenarios(t *testing.T, sc *scheme.Scheme, p *policy.Policy, ids ...string) map[string]harness.Result {
	t.Helper()
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	scs, err := harness.Select(all, ids, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := harness.Run(context.Background(), scs, harness.Options{Binary: binPath, Policy: p, Adapter: sc.Adapter, Parallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]harness.Result{}
	for _, r := range rep.Results {
		out[r.ID] = r
	}
	return out
}

// A step a loaded machine times out before it acts is an ERROR, never CONTAINED (its reason says
// it did not start: timed out before acting, or, on a machine loaded enough that the harness's own
// wait for the answer ended first, no result came back and no process of it was seen): the quiet
// detectors of write-outside-python prove nothing when its interpreter never ran. The timeout
// here (1ms) is shorter than any interpreter takes to start, so the call really times out
// before acting. A call the policy refuses is containment (its refusal names the rule) and
// stays CONTAINED under the same timeout. Control: with the policy's own timeout the same
// python step proves it started (its token came back) and is CONTAINED.
func TestHarnessStepThatNeverStartedIsError(t *testing.T) {
	p, err := allowlistscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	p.Limits.Timeout = policy.Duration{Duration: time.Millisecond}
	rs := runScenarios(t, allowlistscheme.Scheme, p, "write-outside-python", "write-outside-sort")
	if r := rs["write-outside-python"]; r.Outcome != harness.Error || !strings.Contains(r.Reason, "did not start") {
		t.Errorf("a python step timed out before it acted was judged %s (%s), want ERROR saying it did not start; started: %v", r.Outcome, r.Reason, r.Started)
	}
	if r := rs["write-outside-sort"]; r.Outcome != harness.Contained || !strings.Contains(strings.Join(r.Started, "\n"), "refused by policy (rule ") {
		t.Errorf("refused argv steps were judged %s (%s), want CONTAINED with the refusal as proof; started: %v", r.Outcome, r.Reason, r.Started)
	}

	p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	rs = runScenarios(t, allowlistscheme.Scheme, p, "write-outside-python", "shell-metacharacters")
	if r := rs["write-outside-python"]; r.Outcome != harness.Contained || !strings.Contains(strings.Join(r.Started, "\n"), "start token came back") {
		t.Errorf("control: write-outside-python with time to run was %s (%s); started: %v", r.Outcome, r.Reason, r.Started)
	}
	// Pinned programs that ran prove it by their exit status.
	if r := rs["shell-metacharacters"]; r.Outcome != harness.Contained || !strings.Contains(strings.Join(r.Started, "\n"), "exit status") {
		t.Errorf("argv steps that ran were %s (%s); started: %v", r.Outcome, r.Reason, r.Started)
	}
}

// The same for docker: a container that cannot start its step within the call's timeout leaves
// no start token, and the scenario is an ERROR; with time to run it is CONTAINED. Argv steps
// run through the container's shell carry the token too.
func TestDockerHarnessStepThatNeverStartedIsError(t *testing.T) {
	needDocker(t)
	p, err := dockerscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	p.Limits.Timeout = policy.Duration{Duration: time.Millisecond}
	rs := runScenarios(t, dockerscheme.Scheme, p, "write-outside-python", "write-outside-sort")
	for _, id := range []string{"write-outside-python", "write-outside-sort"} {
		if r := rs[id]; r.Outcome != harness.Error || !strings.Contains(r.Reason, "did not start") {
			t.Errorf("%s timed out before it acted was judged %s (%s), want ERROR; started: %v", id, r.Outcome, r.Reason, r.Started)
		}
	}
	p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	rs = runScenarios(t, dockerscheme.Scheme, p, "write-outside-python", "write-outside-sort")
	for _, id := range []string{"write-outside-python", "write-outside-sort"} {
		if r := rs[id]; r.Outcome != harness.Contained || !strings.Contains(strings.Join(r.Started, "\n"), "start token came back") {
			t.Errorf("control: %s with time to run was %s (%s); started: %v", id, r.Outcome, r.Reason, r.Started)
		}
	}
}
