package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// demo, the README's first command: the layers table, the allowed calls ran, the hostile ones
// refused, exit 0; and its output is the demo's own: no serve start-up log line among it (its
// `serve --check` logged "allowlist workspace configured=… resolved=…" at info).
func TestDemo(t *testing.T) {
	e := newInitEnv(t)
	cmd := exec.Command(binPath, "demo")
	cmd.Env = e.env
	out, stderr, code := runCmdTimeout(t, cmd, 90*time.Second)
	if code != 0 || !strings.Contains(out, "Every call behaved as the policy says") || !strings.Contains(out, "LAYER") ||
		strings.Count(out, "-> REFUSED") != 4 {
		t.Fatalf("demo: exit %d\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(stderr+out, "level=INFO") {
		t.Errorf("demo printed serve's info log:\n%s", stderr)
	}
}

// demo's "Next:" names the binary as init's advice does: the bare name when `mcpsandbox` on PATH
// is this binary (trial36 F10: its absolute path, beside init's "mcpsandbox verify").
func TestDemoNextNamesTheCommand(t *testing.T) {
	e := newInitEnv(t)
	dir := t.TempDir()
	if err := os.Symlink(binPath, filepath.Join(dir, "mcpsandbox")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(binPath, "demo")
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + dir + string(os.PathListSeparator) + v
		}
		cmd.Env = append(cmd.Env, kv)
	}
	out, stderr, code := runCmdTimeout(t, cmd, 90*time.Second)
	if code != 0 || !strings.Contains(out, "\n  mcpsandbox init ") || !strings.Contains(out, "\n  mcpsandbox harness --default") {
		t.Fatalf("demo's Next: with this binary on PATH: exit %d\n%s\n%s", code, out, stderr)
	}
}
