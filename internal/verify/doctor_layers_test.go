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
	}, "--default")
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
		cs := LayerChecks([]executor.Layer{{Name: "landlock: UDP", Off: c.off, Detail: "not on this kernel (needs Landlock ABI 10, this one has 6)"}}, "--default")
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

// trial37 F12: the advice named "explain --policy FILE", a placeholder: it names the policy
// verify was given, by its path (quoted for a shell) or as --default.
func TestHostRowsNameThePolicy(t *testing.T) {
	ctx := context.Background()
	cs := MeasuredLayers(ctx, "/bin/false", "/my policies/p.toml")
	if len(cs) != 1 || !strings.Contains(cs[0].Advice, "mcpsandbox serve --policy '/my policies/p.toml' --check") {
		t.Fatalf("the path, quoted: %+v", cs)
	}
	cs = MeasuredLayers(WithPolicyArg(ctx, "--default"), "/bin/false", "/tmp/copy-of-default.toml")
	if len(cs) != 1 || !strings.Contains(cs[0].Advice, "mcpsandbox serve --default --check") {
		t.Fatalf("--default, not the temporary copy: %+v", cs)
	}
	cs = LayerChecks([]executor.Layer{{Name: "landlock: UDP", Off: executor.OffUnavailable, Detail: "not on this kernel"}}, policyArg(ctx, "/p.toml"))
	if !strings.Contains(cs[0].Advice, "see `mcpsandbox explain --policy /p.toml` for the threats left open") {
		t.Fatalf("explain's command names the policy: %q", cs[0].Advice)
	}
}
