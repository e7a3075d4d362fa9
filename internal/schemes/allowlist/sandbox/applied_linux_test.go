package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
)

// A call's result names what its commit applied, deletions first (trial37 F8: a deleted source
// file showed as "3 change(s) applied"): the scheme hands the commit's report on whole. Red
// with mutant workspace-applied-unnamed.
func TestWorkspaceCommitNamesWhatItApplied(t *testing.T) {
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	if err := os.WriteFile(filepath.Join(e.ws, "calc.go"), []byte("package calc\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	res := runPython(t, e, "import os\nos.remove('calc.go')\nos.makedirs('build')\nopen('build/a.o', 'w').write('x')\n")
	if res.ExitCode != 0 {
		t.Fatalf("the call failed: %+v", res)
	}
	sum := sha256.Sum256([]byte("x"))
	want := []executor.AppliedChange{{Op: "delete", Path: "calc.go"}, {Op: "write", Path: "build/a.o", Bytes: 1, SHA256: hex.EncodeToString(sum[:])}, {Op: "mkdir", Path: "build"}}
	if res.Workspace == nil || !slices.Equal(res.Workspace.Applied, want) || res.Workspace.Deleted != 1 {
		t.Fatalf("the result's workspace %+v, want applied %+v", res.Workspace, want)
	}
	if s := wslayer.Summary(res.Workspace); !strings.Contains(s, "applied (1 bytes written): deleted calc.go; wrote build/a.o; made build/") {
		t.Errorf("the summary: %s", s)
	}
}
