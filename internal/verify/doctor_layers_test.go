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

// A binary that cannot measure is one failed check naming the way to see why, not silence.
func TestMeasuredLayersFailure(t *testing.T) {
	cs := MeasuredLayers(context.Background(), "/bin/false", "/nonexistent.toml")
	if len(cs) != 1 || cs[0].OK || !strings.Contains(cs[0].Advice, "--check") {
		t.Fatalf("checks %+v", cs)
	}
}
