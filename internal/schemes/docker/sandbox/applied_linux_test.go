package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// A docker call's result names what its commit applied, deletions first (trial37 F8: `rm
// test_calc.py` showed as "[workspace: 1 change(s) applied (0 bytes written)]"): the scheme
// hands the commit's report on whole. Red with mutant workspace-applied-unnamed.
func TestWorkspaceCommitNamesWhatItApplied(t *testing.T) {
	eng := needEngine(t)
	ws := userWorkspace(t) // holds a.txt and c.txt
	e := newExec(t, eng, testPolicy(writable(ws)))
	r := mustCall(t, e, ToolPython, map[string]any{"code": "import os\nos.remove('c.txt')\nos.makedirs('build')\nopen('build/a.o', 'w').write('x')\nprint('done')"})
	if r.ExitCode != 0 {
		t.Fatalf("the call failed: %+v", r)
	}
	sum := sha256.Sum256([]byte("x"))
	want := []executor.AppliedChange{{Op: "delete", Path: "c.txt"}, {Op: "write", Path: "build/a.o", Bytes: 1, SHA256: hex.EncodeToString(sum[:])}, {Op: "mkdir", Path: "build"}}
	if r.Workspace == nil || !slices.Equal(r.Workspace.Applied, want) || r.Workspace.Deleted != 1 {
		t.Fatalf("the result's workspace %+v, want applied %+v", r.Workspace, want)
	}
	if s := wslayer.Summary(r.Workspace); !strings.Contains(s, "applied (1 bytes written): deleted c.txt; wrote build/a.o; made build/") {
		t.Errorf("the summary: %s", s)
	}
}
