package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// modes runs f against a cold executor and a pooled one: every container, cold or pooled,
// must behave the same.
func modes(t *testing.T, eng *engine.Client, mut func(*policy.Policy), f func(t *testing.T, e *Executor)) {
	for _, pool := range []int{0, 2} {
		t.Run(fmt.Sprintf("pool=%d", pool), func(t *testing.T) {
			e := newExec(t, eng, testPolicy(func(p *policy.Policy) {
				dksec.Of(p).Pool = pool
				if mut != nil {
					mut(p)
				}
			}))
			f(t, e)
		})
	}
}

func TestPythonAndShell(t *testing.T) {
	eng := needEngine(t)
	t.Setenv("MCPSANDBOX_PLANTED_SECRET", "must-not-leak") // serve's environment, never the container's
	modes(t, eng, nil, func(t *testing.T, e *Executor) {
		r := mustCall(t, e, ToolPython, map[string]any{"code": `import os, sys
print("uid", os.getuid(), os.getgid())
print("net", sorted(os.listdir("/sys/class/net")))
print("stdin", repr(sys.stdin.read()))
print("env", sorted(k for k in os.environ if k not in ("PATH",)))
print("oops", file=sys.stderr)
if __name__ == "__main__":
    sys.exit(7)`})
		want := "uid 65534 65534\nnet ['lo']\nstdin ''\nenv ['HOME', 'HOSTNAME', 'LANG', 'PWD', 'PYTHONDONTWRITEBYTECODE']\n"
		if r.ExitCode != 7 || r.Stdout != want || r.Stderr != "oops\n" || r.TimedOut || r.Truncated {
			t.Errorf("python: %+v\nwant stdout %q", r, want)
		}
		r = mustCall(t, e, ToolShell, map[string]any{"script": "id -u; cat; echo to-err >&2; exit 5"})
		if r.ExitCode != 5 || r.Stdout != "65534\n" || r.Stderr != "to-err\n" {
			t.Errorf("shell: %+v", r)
		}
		// An uncaught exception: Python's own traceback, without the wrapper's frame.
		r = mustCall(t, e, ToolPython, map[string]any{"code": "def f():\n    raise ValueError('boom')\nf()\n"})
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "ValueError: boom") || !strings.Contains(r.Stderr, `File "<stdin>", line 3`) || strings.Contains(r.Stderr, "exec(compile") {
			t.Errorf("exception: %+v", r)
		}
		r = mustCall(t, e, ToolPython, map[string]any{"code": "print(("})
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "SyntaxError") {
			t.Errorf("syntax error: %+v", r)
		}
		// No end mark: os._exit skips the wrapper; the engine's exit status decides.
		r = mustCall(t, e, ToolPython, map[string]any{"code": "import os, sys\nprint('bye', flush=True)\nos._exit(9)"})
		if r.ExitCode != 9 || r.Stdout != "bye\n" {
			t.Errorf("os._exit: %+v", r)
		}
		// Invalid UTF-8 still yields a valid result.
		r = mustCall(t, e, ToolShell, map[string]any{"script": `printf 'a\377b\n'`})
		if r.ExitCode != 0 || r.Stdout != "a\uFFFDb\n" {
			t.Errorf("invalid UTF-8: %+v", r)
		}
		// A script beyond the kernel's 128 KiB argument limit (delivered on stdin, run from a memfd).
		big := strings.Repeat("x=1\n", 50000) + "echo done"
		r = mustCall(t, e, ToolShell, map[string]any{"script": big})
		if r.ExitCode != 0 || r.Stdout != "done\n" {
			t.Errorf("big script: %+v", r)
		}
		// A forged end mark only cuts its own call short.
		r = mustCall(t, e, ToolPython, map[string]any{"code": `import sys, time
a = open("/proc/self/cmdline", "rb").read().split(b"\0"); nonce = a[a.index(b"-c") + 2].decode()
print("before", flush=True)
m = "mcpsandbox-end:%s:42:0\n" % nonce
sys.stdout.write(m); sys.stdout.flush(); sys.stderr.write(m); sys.stderr.flush()
time.sleep(1)
print("after")`})
		if r.ExitCode != 42 || r.Stdout != "before\n" {
			t.Errorf("forged mark: %+v", r)
		}
	})
}

func TestArgumentsRefused(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolPython, map[string]any{}, "code is required"},
		{ToolShell, map[string]any{"code": "x"}, "takes script"},
		{ToolPython, map[string]any{"code": "1", "timeout": -1}, "positive number"},
		{ToolPython, map[string]any{"code": "1", "image": "alpine"}, "unknown field"},
		{ToolPython, map[string]any{"cod": "1"}, "(this tool takes: code, timeout)"},
		{ToolShell, map[string]any{"command": "ls"}, "(this tool takes: script, timeout)"},
	} {
		_, err := call(t, e, tc.tool, tc.args)
		var ref *executor.Refusal
		if !errors.As(err, &ref) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s %v: %v, want a refusal saying %q", tc.tool, tc.args, err, tc.want)
		}
	}
}

// The containers' settings as the engine recorded them.
func TestHardeningInspected(t *testing.T) {
	eng := needEngine(t)
	ws := t.TempDir()
	e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 1; dksec.Of(p).Workspace = ws }))
	var id string
	for deadline := time.Now().Add(20 * time.Second); id == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ids := containers(t, eng, LabelPooled+"=1"); len(ids) > 0 {
			for _, c := range ids {
				ins, _ := eng.API.ContainerInspect(context.Background(), c)
				if ins.Config != nil && ins.Config.Labels[LabelInstance] == e.Instance() {
					id = c
				}
			}
		}
	}
	if id == "" {
		t.Fatal("no pooled container appeared")
	}
	ins, err := eng.API.ContainerInspect(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	h, c := ins.HostConfig, ins.Config
	checks := map[string]bool{
		"network none":                     h.NetworkMode == "none",
		"read-only root":                   h.ReadonlyRootfs,
		"cap-drop ALL":                     len(h.CapDrop) == 1 && h.CapDrop[0] == "ALL" && len(h.CapAdd) == 0,
		"not privileged":                   !h.Privileged,
		"no-new-privileges":                len(h.SecurityOpt) == 2 && h.SecurityOpt[0] == "no-new-privileges",
		"serve's seccomp profile":          ownSeccomp(h.SecurityOpt),
		"user 65534":                       c.User == "65534:65534",
		"watchdog pid 1 (no docker-init)":  h.Init != nil && !*h.Init && watchdogFirst(c),
		"memory = memory+swap":             h.Memory == 256<<20 && h.MemorySwap == 256<<20,
		"pids":                             h.PidsLimit != nil && *h.PidsLimit == 64,
		"cpus":                             h.NanoCPUs == 5e8,
		"tmpfs":                            strings.Contains(h.Tmpfs["/tmp"], "nosuid") && strings.Contains(h.Tmpfs["/tmp"], "nodev") && strings.Contains(h.Tmpfs["/tmp"], "size="),
		"ulimits":                          len(h.Ulimits) == 2,
		"no log":                           h.LogConfig.Type == "none",
		"workspace ro":                     len(h.Mounts) == 1 && h.Mounts[0].ReadOnly && h.Mounts[0].Source == ws,
		"labels":                           c.Labels[LabelApp] == "1" && c.Labels[LabelCall] != "" && c.Labels[LabelPID] == fmt.Sprint(os.Getpid()),
		"running":                          ins.State.Running,
		"default seccomp (not unconfined)": !strings.Contains(strings.Join(h.SecurityOpt, ","), "unconfined"),
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s: not in force (HostConfig %+v, Config %+v)", name, h, c)
		}
	}
	// Layers says the same.
	for _, l := range e.Layers() {
		if l.Name != LayerRuntime && !l.Active {
			t.Errorf("layer %s not active: %s", l.Name, l.Detail)
		}
	}
}

// Attacks from inside, each decided by a detector outside the container.
func TestAttacks(t *testing.T) {
	eng := needEngine(t)

	t.Run("filesystem", func(t *testing.T) {
		ws := t.TempDir()
		os.Chmod(ws, 0o777)
		modes(t, eng, func(p *policy.Policy) { dksec.Of(p).Workspace = ws }, func(t *testing.T, e *Executor) {
			r := mustCall(t, e, ToolShell, map[string]any{"script": `for f in /pwned /etc/pwned /workspace/pwned; do echo x >"$f" && echo "wrote $f"; done; echo ok >/tmp/fine && cat /tmp/fine`})
			if strings.Contains(r.Stdout, "wrote") || !strings.Contains(r.Stdout, "ok") || !strings.Contains(r.Stderr, "Read-only file system") {
				t.Errorf("writes: %+v", r)
			}
			if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
				t.Error("the read-only workspace was written from inside")
			}
		})
		// Negative control: the detector sees a write when the policy allows it.
		e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Workspace = ws; dksec.Of(p).WorkspaceWritable = true }))
		mustCall(t, e, ToolShell, map[string]any{"script": `echo x >/workspace/pwned`})
		if _, err := os.Stat(filepath.Join(ws, "pwned")); err != nil {
			t.Errorf("control: a writable workspace was not written (%v): the detector cannot fire", err)
		}
	})

	t.Run("loopback", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		var hits atomic.Int32
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				hits.Add(1)
				c.Close()
			}
		}()
		port := ln.Addr().(*net.TCPAddr).Port
		code := fmt.Sprintf(`import socket
try:
    socket.create_connection(("127.0.0.1", %d), timeout=2)
    print("connected")
except OSError as e:
    print("refused", e)`, port)
		modes(t, eng, nil, func(t *testing.T, e *Executor) {
			r := mustCall(t, e, ToolPython, map[string]any{"code": code})
			if strings.Contains(r.Stdout, "connected") {
				t.Errorf("reached the host's loopback: %+v", r)
			}
		})
		time.Sleep(100 * time.Millisecond)
		if n := hits.Load(); n != 0 {
			t.Fatalf("the host listener saw %d connections from network-none containers", n)
		}
		// Negative control: with the host's network (loopback only is touched) the listener fires.
		e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "host"}) }))
		mustCall(t, e, ToolPython, map[string]any{"code": code})
		time.Sleep(100 * time.Millisecond)
		if hits.Load() == 0 {
			t.Error("control: network host did not reach the listener: the detector cannot fire")
		}
	})

	t.Run("fork bomb", func(t *testing.T) {
		e := newExec(t, eng, testPolicy(func(p *policy.Policy) {
			p.Limits.Pids = 32
			p.Limits.Timeout = policy.Duration{Duration: 6 * time.Second}
		}))
		peak := watchCgroup(t, eng, e, "pids", "pids.current")
		// each level also starts a sleep that holds its pid: on a loaded machine the bare
		// recursion's short-lived shells never neared the limit (peak 9 at load 16). (A loop
		// of sleeps in the script's own shell is no stronger: dash exits at its first failed
		// fork, and the container with it.)
		r := mustCall(t, e, ToolShell, map[string]any{"script": `b() { sleep 4 & b | b & }; b; sleep 3; echo survived`})
		p := peak()
		t.Logf("exit %d, stdout %q, stderr %q; pids peak seen from the host: %d", r.ExitCode, r.Stdout, clipTest(r.Stderr), p)
		if p > 32 {
			t.Errorf("the container's pids cgroup reached %d, over limits.pids 32", p)
		}
		// the bomb's own shells failing to fork is the limit seen from inside (EAGAIN at pids.max)
		if p < 16 && !strings.Contains(r.Stderr, "Cannot fork") {
			t.Errorf("peak %d and no failed fork: the bomb never neared the limit, so the detector proved nothing", p)
		}
	})

	t.Run("memory bomb", func(t *testing.T) {
		for _, tc := range []struct{ tool, key, src string }{
			// In-process: the wrapper dies with the program; the engine reports the OOM kill.
			{ToolPython, "code", "b = []\nwhile True:\n    b.append(bytearray(8 << 20))"},
			// In a child: the wrapper survives and reports it in its end mark.
			{ToolShell, "script", `python3 -c 'b=[]
while True: b.append(bytearray(8<<20))'; echo "exit $?"`},
		} {
			t.Run(tc.tool, func(t *testing.T) {
				e := newExec(t, eng, testPolicy(func(p *policy.Policy) { p.Limits.Memory = 64 << 20 }))
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				msgs, _ := eng.API.Events(ctx, events.ListOptions{Filters: filters.NewArgs(
					filters.Arg("type", "container"), filters.Arg("event", "oom"), filters.Arg("label", LabelInstance+"="+e.Instance()))})
				r := mustCall(t, e, tc.tool, map[string]any{tc.key: tc.src})
				if !strings.Contains(r.Stderr, "killed: out of memory (limits.memory = 64MiB)") {
					t.Errorf("OOM not reported in words: %+v", r)
				}
				select {
				case m := <-msgs:
					t.Logf("engine event %s for %.12s", m.Action, m.Actor.ID)
				case <-time.After(5 * time.Second):
					t.Error("the engine reported no oom event: the kill was not the memory limit")
				}
			})
		}
	})

	t.Run("timeout", func(t *testing.T) {
		modes(t, eng, func(p *policy.Policy) { p.Limits.Timeout = policy.Duration{Duration: 4 * time.Second} }, func(t *testing.T, e *Executor) {
			t0 := time.Now()
			r := mustCall(t, e, ToolShell, map[string]any{"script": "echo started; sleep 3600"})
			if !r.TimedOut || r.ExitCode != 137 || r.Stdout != "started\n" {
				t.Errorf("sleep 3600: %+v", r)
			}
			if d := time.Since(t0); d > 15*time.Second {
				t.Errorf("the call took %s", d)
			}
			// The per-call timeout is capped by the policy, and may be shorter.
			r = mustCall(t, e, ToolPython, map[string]any{"code": "import time; time.sleep(30)", "timeout": 0.5})
			if !r.TimedOut {
				t.Errorf("timeout 0.5: %+v", r)
			}
			waitGone(t, eng, e)
		})
	})

	t.Run("output flood", func(t *testing.T) {
		e := newExec(t, eng, testPolicy())
		flood := map[string]any{"code": "import sys\nb = b'y' * 65536\nfor _ in range(800):\n    sys.stdout.buffer.write(b)\nsys.stdout.flush()\nprint('err', file=sys.stderr)"}
		alloc := func(max int) (*executor.Result, uint64) {
			raw, _ := json.Marshal(flood)
			var m0, m1 runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m0)
			r, err := tool(e, ToolPython).Run(context.Background(), executor.Call{Args: raw, Timeout: 60 * time.Second, MaxOutput: max})
			runtime.ReadMemStats(&m1)
			if err != nil {
				t.Fatal(err)
			}
			return r, m1.TotalAlloc - m0.TotalAlloc
		}
		r, a := alloc(65536)
		t.Logf("50 MB flood, cap 64 KiB: serve allocated %d KiB", a>>10)
		if !r.Truncated || len(r.Stdout) != 65536 || r.Stderr != "err\n" || r.ExitCode != 0 {
			t.Errorf("flood: exit %d truncated %v stdout %d bytes stderr %q", r.ExitCode, r.Truncated, len(r.Stdout), r.Stderr)
		}
		if a > 16<<20 {
			t.Errorf("serve allocated %d MiB for a 50 MB flood capped at 64 KiB", a>>20)
		}
		// Negative control: with a cap above the flood, the same measure sees it buffered.
		_, a = alloc(64 << 20)
		if a < 50<<20 {
			t.Errorf("control: an uncapped flood allocated only %d MiB: the measure cannot fire", a>>20)
		}
	})
}

// watchCgroup samples a cgroup file of the executor's running containers from the host, and
// returns a function giving the highest value seen.
func watchCgroup(t *testing.T, eng *engine.Client, e *Executor, ctrl, file string) func() int64 {
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		var peak int64
		for {
			select {
			case <-stop:
				done <- peak
				return
			default:
			}
			cs, _ := eng.API.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelInstance+"="+e.Instance()))})
			for _, c := range cs {
				for _, p := range []string{
					filepath.Join("/sys/fs/cgroup", ctrl, "docker", c.ID, file),
					filepath.Join("/sys/fs/cgroup", ctrl, "system.slice", "docker-"+c.ID+".scope", file),
					filepath.Join("/sys/fs/cgroup/system.slice", "docker-"+c.ID+".scope", file),
					filepath.Join("/sys/fs/cgroup/docker", c.ID, file),
				} {
					if b, err := os.ReadFile(p); err == nil {
						var v int64
						fmt.Sscan(string(b), &v)
						peak = max(peak, v)
						// the kernel's own high-water mark (pids.peak, memory.peak: Linux 6.1+)
						// holds what 10ms samples miss on a loaded machine
						if pk, ok := strings.CutSuffix(p, ".current"); ok {
							if b, err := os.ReadFile(pk + ".peak"); err == nil {
								fmt.Sscan(string(b), &v)
								peak = max(peak, v)
							}
						}
						break
					}
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// waitGone waits until the executor's call containers are all removed (pooled ones aside).
func waitGone(t *testing.T, eng *engine.Client, e *Executor) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		left := 0
		cs, _ := eng.API.ContainerList(context.Background(), container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", LabelInstance+"="+e.Instance()))})
		for _, c := range cs {
			if c.Labels[LabelPooled] == "" || c.State != "running" {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d containers of this serve still exist 20s after their calls", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// N calls at concurrency, with timeouts and client cancels mixed in, leave the engine's
// container list as it was.
func TestNoLeaks(t *testing.T) {
	eng := needEngine(t)
	before := len(containers(t, eng, ""))
	ours := len(containers(t, eng, LabelApp))
	e, err := New(testPolicy(func(p *policy.Policy) {
		dksec.Of(p).Pool = 2
		p.Limits.Timeout = policy.Duration{Duration: 10 * time.Second}
	}), Options{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	const n, conc = 32, 8
	var wg sync.WaitGroup
	sem := make(chan struct{}, conc)
	var errs atomic.Int32
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			args := map[string]any{"script": "echo hi"}
			switch i % 4 {
			case 1:
				args = map[string]any{"script": "sleep 3600", "timeout": 0.3}
			case 2:
				args = map[string]any{"script": "sleep 3600"}
				go func() { time.Sleep(time.Duration(50+i*20) * time.Millisecond); cancel() }()
			case 3:
				args = map[string]any{"script": "yes | head -c 2000000"}
			}
			raw, _ := json.Marshal(args)
			r, err := tool(e, ToolShell).Run(ctx, executor.Call{Args: raw, Timeout: 10 * time.Second, MaxOutput: 4096})
			switch {
			case i%4 == 2:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("call %d: cancelled call returned %+v, %v", i, r, err)
				}
			case err != nil:
				errs.Add(1)
				t.Errorf("call %d: %v", i, err)
			case i%4 == 1 && !r.TimedOut:
				t.Errorf("call %d: not timed out: %+v", i, r)
			}
		}()
	}
	wg.Wait()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if e.Tracked() != 0 {
		t.Errorf("executor still tracks %d containers after Close", e.Tracked())
	}
	// Engine-wide counts only hold when nothing else uses the engine meanwhile: logged.
	if after, oursAfter := len(containers(t, eng, "")), len(containers(t, eng, LabelApp)); after != before || oursAfter != ours {
		t.Logf("engine-wide: %d containers before, %d after (mcpsandbox: %d, %d); another engine user was active", before, after, ours, oursAfter)
	}
	if got := containers(t, eng, LabelInstance+"="+e.Instance()); len(got) != 0 {
		t.Errorf("%d containers of the closed executor remain", len(got))
	}
}

// clipTest keeps the first 300 bytes of s, for a log line.
func clipTest(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

// A layer not in force says why (Layer.Off), so verify's advice is true: a runtime sharing the
// host kernel and a writable root are the policy's choice; a layer serve asked for and the
// engine did not record stays "" (the probe found it missing).
func TestLayersSayWhyOff(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).ReadOnly = false }))
	want := map[string]string{LayerReadOnlyRoot: executor.OffByPolicy}
	if !e.spec.gvisor {
		want[LayerRuntime] = executor.OffByPolicy
	}
	for _, l := range e.Layers() {
		if l.Active {
			if l.Off != "" {
				t.Errorf("layer %s in force says it is off (%q)", l.Name, l.Off)
			}
			continue
		}
		w, ok := want[l.Name]
		if !ok {
			t.Errorf("layer %s not in force on this engine: %s", l.Name, l.Detail)
			continue
		}
		if l.Off != w {
			t.Errorf("layer %s: Off = %q, want %q (%s)", l.Name, l.Off, w, l.Detail)
		}
		delete(want, l.Name)
	}
	for name := range want {
		t.Errorf("layer %s: not reported off", name)
	}
	// what the engine lacks is the host's, a gap the probe found is ""
	if got := e.offWhy(LayerPids, offFacts{pidsOK: false}); got != executor.OffUnavailable {
		t.Errorf("pids the engine cannot enforce: %q", got)
	}
	if got := e.offWhy(LayerPids, offFacts{pidsOK: true}); got != "" {
		t.Errorf("pids the engine can enforce and did not record: %q", got)
	}
}

// A container's fallocate gets EOPNOTSUPP (2.5 GB of the layers' disk in 30 ms, past
// workspace_quota before its watchdog looks: attack round atk32, F7), with and without
// KEEP_SIZE, and posix_fallocate then writes the bytes, as on a file system without it. Red with
// mutant seccomp-fallocate.
func TestContainersCannotFallocate(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	r := mustCall(t, e, ToolShell, map[string]any{"script": `fallocate -l 1M /tmp/f 2>&1; echo "plain rc=$?"
: > /tmp/g; fallocate -n -l 1M /tmp/g 2>&1; echo "keep-size rc=$?"
python3 -c 'import os; fd = os.open("/tmp/h", os.O_CREAT | os.O_WRONLY); os.posix_fallocate(fd, 0, 1 << 16); print("posix_fallocate", os.fstat(fd).st_size)'
`})
	for _, want := range []string{"Operation not supported", "plain rc=1", "keep-size rc=1", "posix_fallocate 65536"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("want %q in %q %q", want, r.Stdout, r.Stderr)
		}
	}
}

// A docker.network the engine lacks is refused at serve's start with what was likely meant (a
// host written as a string, not a list: trial34 F1); a network it has passes.
func TestNamedNetworkMustExist(t *testing.T) {
	eng := needEngine(t)
	ctx := context.Background()
	if err := CheckNetwork(ctx, eng, "bridge"); err != nil {
		t.Errorf("bridge: %v", err)
	}
	err := CheckNetwork(ctx, eng, "pypi.org")
	if err == nil || !strings.Contains(err.Error(), `no such network`) || !strings.Contains(err.Error(), `network = ["pypi.org"]`) {
		t.Errorf("pypi.org: %v", err)
	}
	if err := CheckNetwork(ctx, eng, "mcpsandbox-no-such-net"); err == nil || !strings.Contains(err.Error(), "docker network create") {
		t.Errorf("a name: %v", err)
	}
}
