package docker

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The harness runs a session policy (no refusal up front): the adapter says how many sessions
// one serve may hold and which key says so, and that a per-call policy keeps none.
func TestHarnessSessionCap(t *testing.T) {
	var ad harness.Adapter = adapter{}
	if _, ok := ad.(harness.Readier); ok {
		t.Fatal("the docker adapter refuses policies up front again")
	}
	p := policy.Default(dksec.Name)
	if n, _ := (adapter{}).SessionCap(p); n != 0 {
		t.Fatalf("reuse = call: cap %d, want 0", n)
	}
	dksec.Of(p).Reuse = "session"
	if n, key := (adapter{}).SessionCap(p); n != dksec.Of(p).SessionCap() || key != "docker.max_sessions" {
		t.Fatalf("reuse = session: %d %q", n, key)
	}
}

// explain says a session's calls share state (by design) and sessions do not.
func TestExplainSessionState(t *testing.T) {
	p := policy.Default(dksec.Name)
	if g := stateGap(p); g != "" {
		t.Errorf("per-call policy: %q", g)
	}
	dksec.Of(p).Reuse = "session"
	if g := stateGap(p); !strings.Contains(g, "share its container") || !strings.Contains(g, "docker.max_sessions = 4") {
		t.Errorf("session policy: %q", g)
	}
}
