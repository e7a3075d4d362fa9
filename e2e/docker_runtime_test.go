package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// needRuntime: the engine must have the runtime registered. Under CI=true (.ci/run registers
// crun and runsc with scripts/docker-runtimes.sh) a missing one fails; elsewhere the test skips
// and says how to register it.
func needRuntime(t *testing.T, eng *engine.Client, name string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := eng.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := info.Runtimes[name]; ok {
		return
	}
	// Fails under CI=true: .ci/run registers the runtimes with scripts/docker-runtimes.sh.
	testenv.Skip(t, "the engine has no runtime %s (register crun and runsc: sudo sh scripts/docker-runtimes.sh)", name)
}

// Each runtime a policy can name runs the calls, as uid 65534 with no interface but loopback;
// the engine records that runtime for the call's container (seen from outside, while the call
// runs), and runsc's programs see a kernel of gVisor's own, crun's the host's.
func TestDockerRuntimes(t *testing.T) {
	eng := needDocker(t)
	hostKernel, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Skipf("SKIP: no /proc/sys/kernel/osrelease here: %v", err)
	}
	for _, rt := range []string{"crun", "runsc"} {
		t.Run(rt, func(t *testing.T) {
			needRuntime(t, eng, rt)
			cs, cmd := serveDocker(t, dockerPolicy(t, func(p *policy.Policy) {
				dksec.Of(p).Runtime = rt
				p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
			}))
			defer cs.Close()
			// While the call sleeps, ask the engine which runtime its container got.
			seen := make(chan string, 1)
			go func() {
				f := filters.NewArgs(filters.Arg("label", fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)))
				for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
					list, err := eng.API.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
					if err != nil || len(list) == 0 {
						continue
					}
					if c, err := eng.API.ContainerInspect(context.Background(), list[0].ID); err == nil {
						seen <- c.HostConfig.Runtime
						return
					}
				}
				seen <- "(no container of this serve seen)"
			}()
			code := `import os, socket, time
print(os.getuid(), os.getgid())
print(os.uname().release)
print(sorted(n for _, n in socket.if_nameindex()))
time.sleep(1)`
			res, r, err := callDocker(context.Background(), cs, sd.ToolPython, map[string]any{"code": code})
			if err != nil || res.IsError || r.ExitCode != 0 {
				t.Fatalf("call under %s: %v %s %+v", rt, err, resultText(res), r)
			}
			lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
			if len(lines) != 3 || lines[0] != "65534 65534" || lines[2] != "['lo']" {
				t.Errorf("under %s: want uid/gid 65534 and only lo, got %q (stderr %q)", rt, r.Stdout, r.Stderr)
			}
			if got := <-seen; got != rt {
				t.Errorf("the engine ran the call's container with runtime %q, want %q", got, rt)
			}
			own := len(lines) > 1 && lines[1] != strings.TrimSpace(string(hostKernel))
			if want := rt == "runsc"; own != want {
				t.Errorf("under %s the program saw kernel %q, the host runs %q: a kernel of its own = %v, want %v",
					rt, lines[1], strings.TrimSpace(string(hostKernel)), own, want)
			}
		})
	}
}

// init --runtime: a runtime the engine lacks is refused before anything is written, with what
// the engine has; one it has lands in the policy.
func TestInitRuntime(t *testing.T) {
	eng := needDocker(t)
	e := newInitEnv(t)
	pol := filepath.Join(e.home, "p.toml")
	out, stderr, code := e.run(t, "", "--scheme", "docker", "--image", dockerImage(), "--runtime", "mcpsandbox-no-such-runtime",
		"--policy-out", pol, "--print", "--yes")
	if code == 0 || !strings.Contains(stderr, `no runtime "mcpsandbox-no-such-runtime"`) || !strings.Contains(stderr, "it has: ") ||
		!strings.Contains(stderr, "Nothing was written") {
		t.Errorf("init with a runtime the engine lacks: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(pol); err == nil {
		t.Error("a policy was written for a runtime the engine lacks")
	}
	needRuntime(t, eng, "crun")
	out, stderr, code = e.run(t, "", "--scheme", "docker", "--image", dockerImage(), "--runtime", "crun", "--policy-out", pol, "--print", "--yes")
	if code != 0 || !strings.Contains(out+stderr, "checked: the entry starts and answers MCP") {
		t.Fatalf("init --runtime crun: exit %d\n%s\n%s", code, out, stderr)
	}
	p, err := policy.Load(pol)
	if err != nil || dksec.Of(p).Runtime != "crun" {
		t.Errorf("policy: %v, runtime %q", err, dksec.Of(p).Runtime)
	}
}
