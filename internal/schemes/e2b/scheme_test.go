package e2b

import (
	"errors"
	"strings"
	"testing"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	se "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// outcome is "" when the adapter would run the scenario's first step, else its N/A reason.
func outcome(t *testing.T, id string, p *policy.Policy) string {
	t.Helper()
	scs, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scs {
		if s.ID != id {
			continue
		}
		steps, why := s.StepsFor(offer)
		if why != "" {
			return why
		}
		_, err := adapter{}.Params(steps[0], &harness.Arena{}, p)
		var na *harness.NotApplicableError
		if errors.As(err, &na) {
			return na.Why
		}
		if err != nil {
			t.Fatal(err)
		}
		return ""
	}
	t.Fatalf("no scenario %s", id)
	return ""
}

// Host-side detectors cannot see a remote microVM: their scenarios are N/A ("isolation
// delegated to E2B"), never contained; what serve itself promises is judged.
func TestWhatTheHarnessJudges(t *testing.T) {
	call, _ := Default("")
	session, _ := Default("")
	e2bsec.Of(session).Reuse = "session"
	for _, c := range []struct {
		id   string
		p    *policy.Policy
		runs bool
	}{
		{"read-ssh-key-absolute", call, false}, // leak: host files
		{"tcp-exfil-loopback", call, false},    // host listeners
		{"planted-binary", call, false},        // marker, but the plant lives on this host
		{"fork-bomb-python", call, false},      // a resource bomb: E2B's VM limits
		{"memory-bomb", call, false},
		{"cpu-spin-past-timeout", call, true}, // wall_time + survivors: serve's promise
		{"setsid-survivor", call, true},
		{"sleep-past-timeout", call, false}, // tail -f notes.txt: a host workspace file
		{"output-flood-file", call, false},  // setup files in the host workspace
		{"output-flood-python", call, true},
		{"setsid-survivor", session, false}, // survivors live on in the session's sandbox by design
		{"fake-jsonrpc-on-fds", session, true},
	} {
		why := outcome(t, c.id, c.p)
		if c.runs != (why == "") {
			t.Errorf("%s (reuse=%s): runs=%v, reason %q", c.id, e2bsec.Of(c.p).Reuse, why == "", why)
		}
		if why != "" && !strings.Contains(why, "isolation delegated to E2B") && !strings.Contains(why, "does not apply") {
			t.Errorf("%s: N/A must say isolation is delegated: %q", c.id, why)
		}
	}
	// A step no built-in scenario owns is N/A by default.
	if _, err := (adapter{}).Params(harness.Step{Shell: "echo unknown"}, &harness.Arena{}, call); err == nil {
		t.Error("an unknown step must be N/A")
	}
}

func TestAdapterSpeaksRunCommand(t *testing.T) {
	p, _ := Default("")
	scs, _ := harness.Load()
	for _, s := range scs {
		if s.ID != "setsid-survivor" {
			continue
		}
		steps, _ := s.StepsFor(offer)
		a := &harness.Arena{Tag: "mcpsbtagX"}
		params, err := adapter{}.Params(steps[0], a, p)
		if err != nil {
			t.Fatal(err)
		}
		cmd, _ := params.Arguments.(map[string]any)["command"].(string)
		if params.Name != "run_command" || !strings.HasPrefix(cmd, "exec python3 -c '") || !strings.HasSuffix(cmd, " 'mcpsbtagX'") {
			t.Fatalf("params %+v", params)
		}
	}
}

func TestThreatsNameTheExecutorsLayers(t *testing.T) {
	known := map[string]bool{}
	for _, id := range se.LayerIDs {
		known[id] = true
	}
	for _, th := range threats {
		for _, l := range th.Layers {
			if !known[l] {
				t.Errorf("threat %q names unknown layer %s", th.Threat, l)
			}
		}
		if len(th.Layers) == 0 && !th.Server {
			t.Errorf("threat %q is enforced by nothing", th.Threat)
		}
	}
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).AllowInternet = true
	fs := verify.Audit(p, "", Scheme.Audit)
	if len(fs) != 2 {
		t.Fatalf("MS302 and MS303 on an internet-enabled session policy: %+v", fs)
	}
}
