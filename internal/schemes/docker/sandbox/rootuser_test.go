package sandbox

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestRootUserWrittenWithZerosIsReported: docker.user = "00:00" runs the program as root (the
// engine reads the uid as a number); serve's layers (what --check and verify show) must say the
// non-root layer is off by policy, not report it in force.
func TestRootUserWrittenWithZerosIsReported(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).User = "00:00" }))
	res := mustCall(t, e, ToolShell, map[string]any{"script": "id -u"})
	if strings.TrimSpace(res.Stdout) != "0" {
		t.Fatalf("the premise: user 00:00 should run as uid 0, got %q (stderr %q)", res.Stdout, res.Stderr)
	}
	var user *executor.Layer
	for _, l := range e.Layers() {
		if l.Name == LayerUser {
			user = &l
		}
	}
	if user == nil {
		t.Fatal("no user layer")
	}
	if user.Active || user.Off != executor.OffByPolicy || !strings.Contains(user.Detail, "root") {
		t.Fatalf("the program ran as root, but the user layer says %+v", *user)
	}
}
