package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A client's cancel that comes while a finished call's writes are being applied does not
// undo them, and the audit says what reached the workspace: the files on disk and the audit's
// workspace record agree (attack round atk29, F1: the audit read "cancelled" with no workspace
// record while 20 000 files had landed). The cancel is sent once the first of the call's files
// shows in the workspace: its commit has begun.
func TestCancelDuringCommitAuditsWhatLanded(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.Timeout = policy.Duration{Duration: time.Minute} })
	const n = 6000
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "python3", "args": []string{"-c",
		fmt.Sprintf("import os\nos.mkdir('many')\nfor i in range(%d):\n    open('many/%%d' %% i, 'w').close()", n), f.tag}}})
	dir := filepath.Join(f.ws, "many")
	for end := time.Now().Add(45 * time.Second); ; time.Sleep(time.Millisecond) {
		if ents, _ := os.ReadDir(dir); len(ents) > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the call's files never reached the workspace")
		}
	}
	cancel()
	var out *audit.Entry
	for end := time.Now().Add(45 * time.Second); out == nil && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(f.auditPath)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e audit.Entry
			if json.Unmarshal([]byte(l), &e) == nil && e.Decision != "" && e.Decision != audit.DecisionStarted {
				out = &e
			}
		}
	}
	if out == nil {
		t.Fatal("no outcome in the audit")
	}
	ents, _ := os.ReadDir(dir)
	if out.Decision != "cancelled" {
		t.Fatalf("the commit of %d files ended before the cancel reached serve (audited %q): the test did not hit its window", n, out.Decision)
	}
	if len(ents) == 0 {
		t.Fatal("nothing in the workspace")
	}
	// The commit counts the directory and each file.
	if out.Workspace == nil || out.Workspace.Committed != len(ents)+1 {
		t.Fatalf("%d files landed; the cancelled call's audit says %+v (reason %q)", len(ents), out.Workspace, out.Reason)
	}
	if !f.responsive() {
		t.Fatal("serve not answering after the cancel")
	}
}
