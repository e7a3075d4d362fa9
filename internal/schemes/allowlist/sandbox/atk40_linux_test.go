package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"golang.org/x/sys/unix"
)

// A home's config that is a link into the workspace (a dotfiles repository as the workspace:
// ~/.cursor/mcp.json -> ws/cursor/mcp.json) is protected under its name in the workspace, which no
// protect pattern knows: a call cannot rewrite what the client starts on the host (atk40 F6),
// nor ~/.bashrc's target; a link to a shortcut (~/src) protects nothing. Red without it (mutant
// allowlist-home-links).
func TestHomeLinksIntoTheWorkspaceAreProtected(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	e := pythonExecutor(t, nil, false)
	needLayer(t, e)
	for p, s := range map[string]string{"cursor/mcp.json": "{}\n", "bashrc": "# mine\n", "src/main.py": "print(1)\n"} {
		full := filepath.Join(e.ws, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(s), 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chown(full, 65534, 65534)
		os.Chown(filepath.Dir(full), 65534, 65534)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{".cursor/mcp.json": "cursor/mcp.json", ".bashrc": "bashrc", "src": "src"} {
		if err := os.Symlink(filepath.Join(e.ws, target), filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(2100 * time.Millisecond) // past the executor's look at the home, taken again every 2s
	res := runPython(t, e, `
for p in ("cursor/mcp.json", "bashrc", "src/main.py"):
    try:
        open(p, "w").write("the call's\n")
    except OSError as err:
        print(p, err)
`)
	for p, want := range map[string]string{"cursor/mcp.json": "{}\n", "bashrc": "# mine\n", "src/main.py": "the call's\n"} {
		if got, _ := os.ReadFile(filepath.Join(e.ws, p)); string(got) != want {
			t.Errorf("%s = %q after the call, want %q (stdout %q, refused %v)", p, got, want, res.Stdout, refusedPaths(res.Workspace))
		}
	}
	if !strings.Contains(res.Stdout+strings.Join(mapValues(refusedPaths(res.Workspace)), " "), "cursor/mcp.json") {
		t.Errorf("the refusal of cursor/mcp.json is not said: stdout %q, refused %v", res.Stdout, refusedPaths(res.Workspace))
	}
}

func mapValues(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+": "+v)
	}
	return out
}

// A call layer that cannot be made at serve's start for a passing reason (its disk full) no
// longer turns the transactional workspace off for serve's life without a word: every call is
// refused, naming why and what to do (atk40 F9). Red when the layer is then left off (mutant
// workspace-layer-probe-open: the call's .envrc lands directly).
func TestLayerProbeFailureRefusesCalls(t *testing.T) {
	newProbeLayer = func(root, ws string) (*wslayer.Layer, error) {
		return nil, fmt.Errorf("mkdir %s/x: %w", root, syscall.ENOSPC)
	}
	t.Cleanup(func() { newProbeLayer = wslayer.New })
	e := pythonExecutor(t, nil, false)
	if !e.attr.has(unix.CLONE_NEWNS) {
		t.Skip("SKIP: no mount namespace here: the layer is never probed")
	}
	args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", "open('.envrc', 'w').write('eval evil')"}})
	_, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != RuleLayerUnavailable || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("the call: %v, want refused by %s naming the disk", err, RuleLayerUnavailable)
	}
	if _, err := os.Stat(filepath.Join(e.ws, ".envrc")); err == nil {
		t.Errorf("the call's .envrc reached the workspace with no layer")
	}
}
