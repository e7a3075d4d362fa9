package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A serve SIGKILLed while it applies a call's writes leaves the call's "started" line with no
// outcome; the next serve finishes the commit and its "recovered" line names that call, so
// `audit verify` finds the log intact and no call unfinished (the recovered line used to carry
// an id of its own, and verify counted the dead call as still running).
func TestRecoveredCommitClosesItsCall(t *testing.T) {
	root := t.TempDir()
	os.Chmod(root, 0o755)
	ws := mkdir(t, root, "ws", 0o777)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534) // commands run as nobody under root
	}
	p := policy.Default(alsec.Name)
	p.Limits.Timeout = policy.Duration{Duration: time.Minute}
	p.Audit.Path = filepath.Join(root, "audit.jsonl")
	alsec.Of(p).Workspace = ws
	c, err := generate.Pin(python)
	if err != nil {
		t.Fatal(err)
	}
	c.Name = "python3"
	alsec.Of(p).Commands = []policy.Command{c}
	b, _ := policy.Marshal(p)
	pol := filepath.Join(root, "policy.toml")
	write(t, pol, string(b), 0o644)
	start := func() (*mcp.ClientSession, *exec.Cmd) {
		cmd := exec.Command(binPath, "serve", "--policy", pol)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-recover", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		return cs, cmd
	}
	cs, cmd := start()
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "python3", "args": []string{"-c",
		"import os\nos.mkdir('many')\nfor i in range(20000):\n    open('many/%d' % i, 'w').close()"}}})
	for end := time.Now().Add(50 * time.Second); ; time.Sleep(time.Millisecond) {
		if ents, _ := os.ReadDir(filepath.Join(ws, "many")); len(ents) > 0 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the call's files never reached the workspace")
		}
	}
	cmd.Process.Kill() // mid-commit
	cs.Close()         // the transport reaps it
	if ents, _ := os.ReadDir(filepath.Join(ws, "many")); len(ents) >= 20000 {
		t.Skipf("the commit finished before the kill (%d files): the test missed its window", len(ents))
	}
	cs2, _ := start()
	defer cs2.Close()
	var started, recovered *audit.Entry
	for end := time.Now().Add(60 * time.Second); recovered == nil && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		data, _ := os.ReadFile(p.Audit.Path)
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			var e audit.Entry
			if json.Unmarshal([]byte(l), &e) != nil {
				continue
			}
			switch e.Decision {
			case audit.DecisionStarted:
				started = &e
			case audit.DecisionRecovered:
				recovered = &e
			}
		}
	}
	if started == nil || recovered == nil {
		t.Fatalf("the audit holds started %+v, recovered %+v", started, recovered)
	}
	if recovered.Call != started.Call {
		t.Errorf("the recovered line names call %q, the dead call was %q", recovered.Call, started.Call)
	}
	if ents, _ := os.ReadDir(filepath.Join(ws, "many")); len(ents) != 20000 || recovered.Workspace == nil || recovered.Workspace.Committed < 20000 {
		t.Errorf("%d files in the workspace; the recovered line says %+v", len(ents), recovered.Workspace)
	}
	out, stderr, code := runBin(t, "audit", "verify", p.Audit.Path)
	if code != 0 || !strings.Contains(out, "intact") || strings.Contains(out, "no outcome") {
		t.Errorf("audit verify (exit %d):\n%s%s", code, out, stderr)
	}
}
