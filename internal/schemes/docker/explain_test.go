package docker

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Under reuse = "session" the row on processes left after a call says they outlive calls by
// design, and until when; per call it has no gap (trial34 F4: "serve removes each container
// after its call" was all it said).
func TestExplainSessionProcesses(t *testing.T) {
	var row *verify.ThreatRule
	for i := range threats {
		if strings.HasPrefix(threats[i].Threat, "leave processes running") {
			row = &threats[i]
		}
	}
	if row == nil || row.Gap == nil {
		t.Fatalf("no gap on the processes row: %+v", row)
	}
	p := policy.Default(dksec.Name)
	if g := row.Gap(p); g != "" {
		t.Errorf("per call: %q", g)
	}
	dksec.Of(p).Reuse = "session"
	if g := row.Gap(p); !strings.Contains(g, "outlive its calls by design") || !strings.Contains(g, "docker.session_idle (10m)") {
		t.Errorf("per session: %q", g)
	}
}
