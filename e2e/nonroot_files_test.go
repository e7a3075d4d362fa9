package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A serve that is not root, whose workspace its user cannot write: write_file's refusal names
// the workspace's permissions and whom the tools act as, under rule allowlist.workspace, not a
// rule the user never set (trial33 F9: "refused by rule allowlist.protect ... permission
// denied"). Run as root, the test starts serve as uid 65534 in a workspace root owns (0755).
// Red with mutant files-unwritable-blamed.
func TestNonRootWorkspaceNotWritableIsSaid(t *testing.T) {
	ws, asNobody := unwritableWorkspace(t)
	cmd := asNobody("serve", "--default", "--workspace", ws, "--log-level", "error")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	var got string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			got += tc.Text
		}
	}
	if !res.IsError || !strings.Contains(got, "allowlist.workspace") || !strings.Contains(got, "serve's user (uid 65534)") ||
		!strings.Contains(got, "may not create files") || strings.Contains(got, "allowlist.protect") {
		t.Fatalf("write_file into a workspace serve's user cannot write: %q, want the workspace's permissions named under allowlist.workspace", got)
	}
	if _, err := os.Stat(ws + "/a.txt"); err == nil {
		t.Error("a.txt was written")
	}
}

// init and verify, run by a user who cannot write the workspace they name, say so (trial33 F9:
// both were silent for a user who is not root; under root the same case gets its note and MS113).
// Run as root, the test runs them as uid 65534 for a workspace root owns (0755).
func TestNonRootInitSaysTheWorkspaceIsNotTheirs(t *testing.T) {
	ws, asNobody := unwritableWorkspace(t)
	pol := filepath.Join(filepath.Dir(ws), "home", "p.toml")
	run := func(args ...string) string {
		out, err := asNobody(args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := run("init", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--policy-out", pol, "--print", "--yes"); !strings.Contains(out, "is not yours to write") {
		t.Errorf("init as uid 65534 for a workspace root owns: no note:\n%s", out)
	}
	if out := run("verify", "--policy", pol, "--no-harness"); !strings.Contains(out, "MS113") || !strings.Contains(out, "not yours to write") {
		t.Errorf("verify as uid 65534 for a workspace root owns: no MS113:\n%s", out)
	}
}

// unwritableWorkspace is a workspace root owns (0755: uid 65534 reads it, cannot write it),
// and how to run mcpsandbox as uid 65534 with a HOME of its own beside it. The test runs as root.
func unwritableWorkspace(t *testing.T) (string, func(args ...string) *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("runs mcpsandbox as uid 65534: this test runs as root (as CI does)")
	}
	root, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-unwritable-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	ws := mkdir(t, root, "ws", 0o755)
	home := mkdir(t, root, "home", 0o700)
	os.Chown(home, 65534, 65534)
	return ws, func(args ...string) *exec.Cmd {
		cmd := exec.Command(binPath, args...)
		cmd.Env = append(os.Environ(), "HOME="+home, "XDG_STATE_HOME="+home+"/state", "XDG_CONFIG_HOME="+home+"/config")
		cmd.SysProcAttr = asUserAttr(65534, 65534)
		return cmd
	}
}
