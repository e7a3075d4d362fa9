package docker

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The harness refuses a session policy up front instead of reading a session's by-design state
// as breaches; a per-call policy is not refused.
func TestHarnessRefusesSessionPolicy(t *testing.T) {
	p := policy.Default(policy.SchemeDocker)
	if err := (adapter{}).Ready(p); err != nil {
		t.Fatalf("reuse = call refused: %v", err)
	}
	p.Docker.Reuse = "session"
	if err := (adapter{}).Ready(p); err == nil || !strings.Contains(err.Error(), `reuse = "call"`) {
		t.Fatalf("reuse = session: %v", err)
	}
}

// explain says a session's calls share state (by design) and sessions do not.
func TestExplainSessionState(t *testing.T) {
	p := policy.Default(policy.SchemeDocker)
	if g := stateGap(p); g != "" {
		t.Errorf("per-call policy: %q", g)
	}
	p.Docker.Reuse = "session"
	if g := stateGap(p); !strings.Contains(g, "share its container") || !strings.Contains(g, "docker.max_sessions = 4") {
		t.Errorf("session policy: %q", g)
	}
}
