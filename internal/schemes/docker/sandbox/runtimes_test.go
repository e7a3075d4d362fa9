package sandbox

import (
	"context"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// runtimeProbe is a shell script run in each runtime: ordinary commands (under gVisor the
// pids limit once counted the Sentry's host tasks, and a script running two commands killed
// its own sandbox), a write to /sys/fs/cgroup (crun mounted it writable), and a user
// namespace (Docker's default seccomp profile refuses it; gVisor ignores that profile).
// /tmp is the negative control of the write detector: it must be writable.
const runtimeProbe = `id -u; cat /proc/self/status >/dev/null; true
touch /tmp/ctl && echo tmp-write-ok
if touch /sys/fs/cgroup/planted 2>/dev/null; then echo cgroup-write-ok; fi
if unshare -U true 2>/dev/null; then echo userns-ok; fi
echo probe-end
`

// runtimeForkBomb starts small processes (sleep, spawned: no copy of the interpreter, whose
// memory under gVisor hit limits.memory before the pids limit) until the kernel, or gVisor,
// says no.
const runtimeForkBomb = `import os, sys
n = 0
try:
    for _ in range(400):
        os.posix_spawn("/bin/sleep", ["sleep", "60"], {})
        n += 1
except OSError as e:
    print("forks", n, e.errno)
    sys.exit(0)
print("forks", n, "unbounded")
`

// TestRuntimeDifferences runs the same probes under runc, crun and gVisor (runsc) and holds
// each runtime's result to what Layers claims for it. A runtime the engine lacks is skipped
// with the reason (a failure under CI=true).
func TestRuntimeDifferences(t *testing.T) {
	eng := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	info, err := eng.Info(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	const pids = 16
	for _, rt := range []string{"runc", "crun", "runsc"} {
		t.Run(rt, func(t *testing.T) {
			if _, ok := info.Runtimes[rt]; !ok {
				stop := t.Skipf
				if os.Getenv("CI") == "true" {
					stop = t.Fatalf
				}
				stop("SKIP: the engine at %s has no runtime %q (register it in daemon.json to test it)", eng.Where(), rt)
			}
			e := newExec(t, eng, testPolicy(func(p *policy.Policy) {
				dksec.Of(p).Runtime = rt
				p.Limits.Pids = pids
				p.Limits.Timeout = policy.Duration{Duration: 30 * time.Second}
			}))
			gvisor := rt == "runsc"
			if e.spec.gvisor != gvisor {
				t.Errorf("runtime %s: detected as gVisor = %v", rt, e.spec.gvisor)
			}
			layer := map[string]executor.Layer{}
			for _, l := range e.Layers() {
				layer[l.Name] = l
			}

			res := mustCall(t, e, ToolShell, map[string]any{"script": runtimeProbe})
			out := res.Stdout
			if res.ExitCode != 0 || !strings.Contains(out, "probe-end") || !strings.HasPrefix(out, "65534\n") {
				t.Fatalf("%s: the probe script did not run to its end (pids %d): exit %d\nstdout %q\nstderr %q", rt, pids, res.ExitCode, out, res.Stderr)
			}
			if !strings.Contains(out, "tmp-write-ok") {
				t.Errorf("%s: negative control: /tmp not writable, the write detector cannot fire: %q", rt, out)
			}
			if strings.Contains(out, "cgroup-write-ok") {
				t.Errorf("%s: a program wrote into /sys/fs/cgroup (read-only root claimed: %s)", rt, layer[LayerReadOnlyRoot].Detail)
			}
			if !layer[LayerReadOnlyRoot].Active {
				t.Errorf("%s: read-only root layer not active: %s", rt, layer[LayerReadOnlyRoot].Detail)
			}
			// The seccomp layer must say what the program meets: a user namespace is refused
			// exactly when the layer claims the default profile is in force.
			userns := strings.Contains(out, "userns-ok")
			if sc := layer[LayerSeccomp]; sc.Active == userns {
				t.Errorf("%s: seccomp layer says active=%v (%s), but a user namespace could be created: %v", rt, sc.Active, sc.Detail, userns)
			}

			res = mustCall(t, e, ToolPython, map[string]any{"code": runtimeForkBomb})
			t.Logf("%s: fork bomb: exit %d, stdout %q, stderr %q; pids layer: %s", rt, res.ExitCode, res.Stdout, res.Stderr, layer[LayerPids].Detail)
			m := regexp.MustCompile(`forks (\d+) `).FindStringSubmatch(res.Stdout)
			switch {
			case gvisor:
				// gVisor counts no processes itself: the host limit on its tasks ends the sandbox,
				// and the result must say so in words rather than a bare status 2.
				if m != nil && strings.Contains(res.Stdout, "unbounded") {
					t.Errorf("%s: fork bomb unbounded: %q", rt, res.Stdout)
				}
				if m == nil && !strings.Contains(res.Stderr, "limits.pids") {
					t.Errorf("%s: the sandbox ended without saying why: exit %d, stderr %q", rt, res.ExitCode, res.Stderr)
				}
				if !strings.Contains(layer[LayerPids].Detail, "gVisor") {
					t.Errorf("%s: the pids layer does not say gVisor counts its own host tasks: %s", rt, layer[LayerPids].Detail)
				}
			default:
				if m == nil {
					t.Fatalf("%s: fork bomb: exit %d stdout %q stderr %q", rt, res.ExitCode, res.Stdout, res.Stderr)
				}
				if n, _ := strconv.Atoi(m[1]); n >= pids || n == 0 {
					t.Errorf("%s: %d forks with limits.pids = %d", rt, n, pids)
				}
			}
		})
	}
}

// A child the Python program forks runs in a copy of the wrapper: when it returns or calls
// sys.exit it must end there, not write the end mark, which ended the call at the child's
// exit with the parent's output and status lost (measured: stdout "child\n", exit 0).
func TestForkedChildDoesNotEndTheCall(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	res := mustCall(t, e, ToolPython, map[string]any{"code": `import os, sys, time
pid = os.fork()
if pid == 0:
    print("child")
    sys.exit(5)
os.waitpid(pid, 0)
time.sleep(0.2)
print("parent-done")
sys.exit(3)
`})
	if res.ExitCode != 3 || res.Stdout != "child\nparent-done\n" {
		t.Errorf("the forked child's exit ended the call: exit %d, stdout %q, stderr %q (want 3, %q)", res.ExitCode, res.Stdout, res.Stderr, "child\nparent-done\n")
	}
}

// gVisor refuses host unix sockets by default, so docker.network host lists (serve's egress
// proxy is a host socket mounted into the container) could never work under runsc: every
// request failed while serve said HTTP(S) to the hosts was open. Serve must refuse to start
// instead (measured under runsc 20221219: connect() to the mounted socket fails with EPERM;
// TestEgressHostList shows the same socket answering in a runc container).
func TestGVisorEgressRefused(t *testing.T) {
	eng := needEngine(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	info, err := eng.Info(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	rt, ok := info.Runtimes["runsc"]
	if !ok {
		stop := t.Skipf
		if os.Getenv("CI") == "true" {
			stop = t.Fatalf
		}
		stop("SKIP: the engine at %s has no runtime runsc (gVisor)", eng.Where())
	}
	if hostUDSOpen(rt.Args) {
		t.Skipf("SKIP: this engine's runsc runs with %v, which opens host sockets", rt.Args)
	}
	p := egressPolicy(t, "pypi.test")
	dksec.Of(p).Runtime = "runsc"
	e, err := New(p, Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "--host-uds=open") {
		t.Errorf("serve started docker.network host lists under gVisor, where the proxy's socket is unreachable: Ready() = %v", err)
	}
}

func TestRuntimeArgs(t *testing.T) {
	for _, c := range []struct {
		args     []string
		uds, oci bool
	}{
		{nil, false, false},
		{[]string{"--network=none"}, false, false},
		{[]string{"--host-uds=open", "--oci-seccomp"}, true, true},
		{[]string{"-host-uds", "all"}, true, false},
		{[]string{"--host-uds=none", "-oci-seccomp=true"}, false, true},
		{[]string{"--fsgofer-host-uds"}, true, false},
		{[]string{"--host-uds=create"}, false, false},
	} {
		if got := hostUDSOpen(c.args); got != c.uds {
			t.Errorf("hostUDSOpen(%q) = %v", c.args, got)
		}
		if got := hasOCISeccomp(c.args); got != c.oci {
			t.Errorf("hasOCISeccomp(%q) = %v", c.args, got)
		}
	}
	for name, want := range map[string]bool{"runsc": true, "gvisor": true, "runc": false, "crun": false, "io.containerd.runsc.v1": true} {
		path := map[string]string{"gvisor": "/usr/local/bin/runsc", "runc": "runc", "crun": "/usr/bin/crun"}[name]
		if got := isGVisor(name, path); got != want {
			t.Errorf("isGVisor(%q, %q) = %v", name, path, got)
		}
	}
}
