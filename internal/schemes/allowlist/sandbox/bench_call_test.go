//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// TestMain lets this test binary act as the exec helper, so benchmarks can run real calls, and
// gives the tests their own HOME and XDG directories (a commit keeps refused content under
// $XDG_STATE_HOME).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == helper.Arg {
		helper.Main()
	}
	testenv.Main(m, "internal/schemes/allowlist/sandbox")
}

// BenchmarkCall is one whole call below MCP (argument check, helper hand-over, namespaces,
// Landlock, seccomp, exec of wc, wait), with the per-call mount namespace (private /tmp, the
// workspace's layer, read-only protected paths) prepared ahead of the call, made by the call,
// and without it, measured side by side in one run.
func BenchmarkCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	// "through the exec helper": the way a root serve starts a call whose setup is on a network
	// or FUSE mount (spawnDirect's errSetupNotLocal), and every call of a serve that is not root.
	for _, mode := range []string{"mount namespace", "mount namespace made at the call", "no mount namespace", "through the exec helper"} {
		b.Run(mode, func(b *testing.B) {
			p := wcPolicy(b)
			e, err := New(p, Options{HelperPath: exe, viaHelper: mode == "through the exec helper"})
			if err != nil {
				b.Fatal(err)
			}
			defer e.Close()
			if err := e.Ready(); err != nil {
				b.Fatal(err)
			}
			e.unprepared = mode == "mount namespace made at the call"
			if mode == "no mount namespace" {
				if !e.attr.has(unix.CLONE_NEWNS) {
					b.Skip("no mount namespace on this host in the first place")
				}
				e.attr.flags &^= unix.CLONE_NEWNS
			} else if !e.attr.has(unix.CLONE_NEWNS) {
				b.Skip("no mount namespace on this host")
			}
			args, _ := json.Marshal(map[string]any{"command": "wc", "args": []string{"f"}})
			call := executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10}
			defer cpuMetrics(b)()
			for b.Loop() {
				res, err := e.run(context.Background(), call)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}

// wcPolicy is the built-in policy on a fresh workspace holding f ("a b c"), one the sandbox's
// uid can reach.
func wcPolicy(tb testing.TB) *policy.Policy {
	root := tb.TempDir()
	// Let the sandbox's uid traverse to the workspace: open the two directories TempDir made
	// (never /tmp itself).
	os.Chmod(filepath.Dir(root), 0o755)
	os.Chmod(root, 0o755)
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	os.WriteFile(filepath.Join(ws, "f"), []byte("a b c\n"), 0o644)
	p, err := defaultPolicy(ws)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}
