package verify

import (
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The common bounds take the policy's values: a changed key shows its new value.
func TestBoundsFollowThePolicy(t *testing.T) {
	p := policy.Default("")
	p.Limits.MaxSessions, p.Limits.MaxConnections = 7, 9
	got := map[string]string{}
	for _, b := range Bounds(p) {
		got[b.Key] = b.Value
	}
	if got["limits.max_sessions"] != "7" || got["limits.max_connections"] != "9" {
		t.Errorf("bounds: %v", got)
	}
	for _, b := range EgressBounds(p.Limits, "call", "wait") {
		if b.Key == "limits.egress_connections" && b.Value != "32" {
			t.Errorf("egress bound: %+v", b)
		}
	}
}
