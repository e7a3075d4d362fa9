package verify

import (
	"context"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

func TestLayerChecks(t *testing.T) {
	cs := LayerChecks([]executor.Layer{
		{Name: "seccomp", Active: true, Detail: "measured"},
		{Name: "no_new_privs", Active: false, Detail: "NoNewPrivs: 0"},
		{Name: "user namespace", NotNeeded: true, Detail: "root"},
	})
	if len(cs) != 3 || !cs[0].OK || cs[1].OK || !cs[2].OK {
		t.Fatalf("checks %+v", cs)
	}
	if !strings.Contains(cs[1].Value, "not in force") || cs[1].Advice == "" {
		t.Errorf("a missing layer must say so and what to do: %+v", cs[1])
	}
}

// The advice for a layer not in force is true to why it is off: only a layer the probe tried
// and found not in force is said to have been tried and not stopped.
func TestLayerChecksAdviceByWhyOff(t *testing.T) {
	for _, c := range []struct{ off, want string }{
		{"", "serve's probe tried what this layer forbids and it was not stopped"},
		{executor.OffUnavailable, "not available on this host"},
		{executor.OffByPolicy, "the policy turns it off"},
		{executor.OffNotProvided, "this scheme does not enforce it on any host"},
	} {
		cs := LayerChecks([]executor.Layer{{Name: "landlock: UDP", Off: c.off, Detail: "not on this kernel (needs Landlock ABI 10, this one has 6)"}})
		a := cs[0].Advice
		if cs[0].OK || !strings.HasPrefix(a, c.want) || !strings.Contains(a, "mcpsandbox explain") {
			t.Errorf("off %q: advice %q, want it to begin %q and name explain", c.off, a, c.want)
		}
		if c.off != "" && strings.Contains(a, "not stopped") {
			t.Errorf("off %q: advice says the probe was not stopped: %q", c.off, a)
		}
	}
}

// A binary that cannot measure is one failed check naming the way to see why, not silence.
func TestMeasuredLayersFailure(t *testing.T) {
	cs := MeasuredLayers(context.Background(), "/bin/false", "/nonexistent.toml")
	if len(cs) != 1 || cs[0].OK || !strings.Contains(cs[0].Advice, "--check") {
		t.Fatalf("checks %+v", cs)
	}
}
