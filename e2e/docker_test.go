package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// dockerImage is the image the docker tests run (scripts/build-test-image.sh builds it offline).
func dockerImage() string {
	if s := os.Getenv("MCPSANDBOX_TEST_IMAGE"); s != "" {
		return s
	}
	return "mcpsandbox-test:bookworm"
}

// needDocker returns the engine, or skips loudly (fails under CI=true) when no engine answers
// or the test image is missing.
func needDocker(t *testing.T) *engine.Client {
	t.Helper()
	stop := func(format string, args ...any) { testenv.Skip(t, format, args...) } // fails under CI=true
	eng, err := engine.New()
	if err != nil {
		stop("docker e2e: %v", err)
		return nil
	}
	t.Cleanup(func() { eng.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := eng.Version(ctx); err != nil {
		stop("docker e2e: no Docker engine answers (%v): start one, or set DOCKER_HOST", err)
		return nil
	}
	if _, ok, err := eng.ImagePresent(ctx, dockerImage()); err != nil || !ok {
		why := "is missing"
		if err != nil {
			why = fmt.Sprintf("could not be looked up (%v)", err)
		}
		stop("docker e2e: the image %s %s: build it with sh scripts/build-test-image.sh, or set MCPSANDBOX_TEST_IMAGE", dockerImage(), why)
		return nil
	}
	// The harness and its controls read MCPSANDBOX_TEST_IMAGE: TestMain sets it for the binary.
	return eng
}

func dockerPolicy(t *testing.T, mut func(*policy.Policy)) string {
	t.Helper()
	dir := t.TempDir()
	p := policy.Default(dksec.Name)
	p.Name = "e2e-docker"
	dksec.Of(p).Image = dockerImage()
	p.Limits.Timeout = policy.Duration{Duration: 10 * time.Second}
	p.Audit.Path = filepath.Join(dir, "audit.jsonl")
	if mut != nil {
		mut(p)
	}
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "docker.toml")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// serveDocker starts the built binary on the policy over stdio, as a client does.
func serveDocker(t *testing.T, policyPath string) (*mcp.ClientSession, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(binPath, "serve", "--policy", policyPath, "--log-level", "debug")
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-docker", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, cmd
}

func callDocker(ctx context.Context, cs *mcp.ClientSession, tool string, args map[string]any) (*mcp.CallToolResult, executor.Result, error) {
	var r executor.Result
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err == nil && res.StructuredContent != nil {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
	}
	return res, r, err
}

func resultText(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func countContainers(t *testing.T, eng *engine.Client, label string) int {
	t.Helper()
	f := filters.NewArgs()
	if label != "" {
		f.Add("label", label)
	}
	cs, err := eng.API.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

// containerSet lists the engine's containers carrying label (all if ""): id -> labels.
func containerSet(t *testing.T, eng *engine.Client, label string) map[string]map[string]string {
	t.Helper()
	f := filters.NewArgs()
	if label != "" {
		f.Add("label", label)
	}
	cs, err := eng.API.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]map[string]string{}
	for _, c := range cs {
		m[c.ID] = c.Labels
	}
	return m
}

// Python and shell calls over MCP stdio run as uid 65534 with no network.
func TestDockerServeStdio(t *testing.T) {
	needDocker(t)
	cs, _ := serveDocker(t, dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Pool = 2 }))
	ctx := context.Background()
	tl, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, x := range tl.Tools {
		names = append(names, x.Name)
	}
	if !slices.Equal(names, []string{sd.ToolPython, sd.ToolShell}) && !slices.Equal(names, []string{sd.ToolShell, sd.ToolPython}) {
		t.Fatalf("tools %v", names)
	}
	// A listener on the host's loopback: a container without network must not reach it.
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
	res, r, err := callDocker(ctx, cs, sd.ToolPython, map[string]any{"code": fmt.Sprintf(`import os, socket
print(os.getuid(), os.getgid(), sorted(os.listdir("/sys/class/net")))
try:
    socket.create_connection(("127.0.0.1", %d), timeout=1)
    print("connected")
except OSError as e:
    print("no network")`, ln.Addr().(*net.TCPAddr).Port)})
	if err != nil || res.IsError || r.ExitCode != 0 || r.Stdout != "65534 65534 ['lo']\nno network\n" {
		t.Fatalf("python: %v %+v", err, r)
	}
	time.Sleep(100 * time.Millisecond)
	if hits.Load() != 0 {
		t.Fatalf("the host's loopback listener saw %d connections", hits.Load())
	}
	res, r, err = callDocker(ctx, cs, sd.ToolShell, map[string]any{"script": "id -u; echo err >&2; exit 3"})
	if err != nil || res.IsError || r.ExitCode != 3 || r.Stdout != "65534\n" || r.Stderr != "err\n" {
		t.Fatalf("shell: %v %+v", err, r)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.Contains(tc.Text, "exit_code: 3") {
		t.Errorf("text rendering: %+v", res.Content)
	}
	// trial35 F10: the shell's errors name the script, not the memfd it is read from
	// ("/proc/self/fd/3: 1: curl: not found").
	_, r, err = callDocker(ctx, cs, sd.ToolShell, map[string]any{"script": "no-such-cmd-x"})
	if err != nil || r.ExitCode != 127 || r.Stderr != "script: 1: no-such-cmd-x: not found\n" {
		t.Errorf("a shell error does not name the script: %v %+v", err, r)
	}
	res, _, err = callDocker(ctx, cs, sd.ToolShell, map[string]any{"script": "true", "image": "alpine"})
	if err != nil || !res.IsError {
		t.Errorf("an unknown argument was not refused: %v %+v", err, res)
	}
}

// Many calls over MCP at concurrency, with timeouts and client cancels mixed in, then serve
// SIGKILLed mid-call and restarted: no container labelled by either serve remains (and the
// engine's list is as before when nothing else uses the engine), and no process of the
// killed serve's call outlives it.
func TestDockerNoLeaksAcrossSIGKILL(t *testing.T) {
	eng := needDocker(t)
	before, oursBefore := countContainers(t, eng, ""), countContainers(t, eng, sd.LabelApp)
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Pool, p.Limits.MaxConcurrent, p.Limits.Timeout = 4, 12, policy.Duration{Duration: 20 * time.Second}
	})
	cs, cmd := serveDocker(t, path)

	// On a loaded 2-CPU machine cold starts can take seconds: a call may then time out before
	// its program ran. That is an honest result, not a leak, so it is counted, not failed.
	const n, conc = 48, 12
	var wg sync.WaitGroup
	var overloaded atomic.Int32
	sem := make(chan struct{}, conc)
	for i := range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			args := map[string]any{"script": "echo hi"}
			switch i % 4 {
			case 1:
				args = map[string]any{"script": "sleep 3600", "timeout": 0.5}
			case 2:
				args = map[string]any{"script": "sleep 3600"}
				go func() { time.Sleep(time.Duration(100+i*10) * time.Millisecond); cancel() }()
			case 3:
				args = map[string]any{"code": "print('x' * 100000)"}
			}
			tool := sd.ToolShell
			if i%4 == 3 {
				tool = sd.ToolPython
			}
			res, r, err := callDocker(ctx, cs, tool, args)
			switch {
			case i%4 == 2:
				// cancelled: the client gave up; nothing to check but the engine afterwards
			case err != nil || res.IsError:
				t.Errorf("call %d: %v %s", i, err, resultText(res))
			case i%4 == 1 && !r.TimedOut:
				t.Errorf("call %d not timed out: %+v", i, r)
			case r.TimedOut && i%4 != 1:
				overloaded.Add(1)
			case i%4 == 3 && !r.Truncated:
				t.Errorf("call %d not truncated: %+v", i, r)
			case i%4 == 0 && r.Stdout != "hi\n":
				t.Errorf("call %d: %+v", i, r)
			}
		}()
	}
	wg.Wait()
	if k := overloaded.Load(); k > 0 {
		t.Logf("%d calls timed out before their program ran (machine overloaded)", k)
	}

	// Calls in flight, then SIGKILL: serve never runs Close. One more than the pool holds, so
	// at least one runs in a cold container (a pooled one is labelled pooled from its start,
	// and whether the pool has refilled after the burst depends on the machine's load).
	for range 5 {
		go callDocker(context.Background(), cs, sd.ToolPython, map[string]any{"code": "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(3600)\ntime.sleep(3600)"})
	}
	var running []string
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		running = running[:0]
		cl, _ := eng.API.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(
			filters.Arg("label", fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)))})
		for _, c := range cl {
			if c.Labels[sd.LabelPooled] == "" {
				running = append(running, c.ID)
			}
		}
		if len(running) > 0 {
			break
		}
	}
	if len(running) == 0 {
		t.Fatal("the long call's container never appeared")
	}
	time.Sleep(500 * time.Millisecond) // the program has forked
	cmd.Process.Signal(syscall.SIGKILL)
	// Wait for the kernel to end it (a zombie or gone); the transport reaps it. Its sockets,
	// the attach streams among them, close at exit.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
	}
	// The container's watchdog sees the attach stream close and kills the call's processes.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		ins, err := eng.API.ContainerInspect(context.Background(), running[0])
		if err != nil || !ins.State.Running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("container %.12s still running 10s after serve was SIGKILLed", running[0])
		}
	}
	if n := countContainers(t, eng, sd.LabelApp); n == oursBefore {
		t.Log("note: the killed serve's containers were already gone")
	}

	// A new serve removes the dead instance's containers on start, and its own on exit.
	cs2, cmd2 := serveDocker(t, path)
	if _, r, err := callDocker(context.Background(), cs2, sd.ToolShell, map[string]any{"script": "echo again"}); err != nil || r.Stdout != "again\n" {
		t.Fatalf("after restart: %v %+v", err, r)
	}
	cs2.Close()
	cmd2.Wait()
	// Precisely: nothing labelled by either serve remains. The engine-wide counts are only
	// logged: other programs (other tests) may use the same engine meanwhile.
	for _, pid := range []int{cmd.Process.Pid, cmd2.Process.Pid} {
		if n := countContainers(t, eng, fmt.Sprintf("%s=%d", sd.LabelPID, pid)); n != 0 {
			t.Errorf("%d containers of serve pid %d remain", n, pid)
		}
	}
	if after, ours := countContainers(t, eng, ""), countContainers(t, eng, sd.LabelApp); after != before || ours != oursBefore {
		t.Logf("engine-wide: %d containers before, %d after (mcpsandbox: %d, %d); another engine user was active", before, after, oursBefore, ours)
	}
}

// The harness against a docker policy: every applicable scenario contained; and every docker
// negative control fires its detector.
func TestDockerHarness(t *testing.T) {
	needDocker(t)
	if testing.Short() {
		t.Skip("SKIP in -short: the docker harness run takes about two minutes")
	}
	// The scenarios and the controls are independent runs of the binary: side by side, while the
	// serial tests wait (the test itself is not parallel, so its two halves start at once rather
	// than last in the queue of parallel tests, where the longest one would make the tail).
	t.Run("scenarios", func(t *testing.T) {
		parallel(t)
		path := dockerPolicy(t, nil)
		// Two scenarios at a time: each starts its own serve and containers on a 2-CPU machine.
		// 8s: on a loaded engine (CI runs the docker load tests beside this) a cold container took more
		// than 3s to start, and a step whose program never started is an ERROR, not a pass.
		start := time.Now()
		out, stderr, code := runBin(t, "harness", "--policy", path, "--json", "--max-timeout", "8s", "--parallel", "2")
		t.Logf("scenarios: %s", time.Since(start))
		var rep harness.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
		}
		// planted-binary-exec attacks the allowlist's pinned-binary rule; the docker scheme has no
		// such rule (its tools run any code, in the call's own container), so the payload runs
		// there by design. Until internal/schemes/docker/scenarios.toml says `[planted-binary-exec] skip = ...` it must show
		// exactly that: the marker and nothing else.
		for i, r := range rep.Results {
			if r.ID != "planted-binary-exec" || r.Outcome != harness.Breach {
				continue
			}
			if b := r.Breached(); len(b) != 1 || b[0] != "marker" {
				t.Errorf("planted-binary-exec: breached %v, want only the marker (the payload ran inside the container)", b)
			}
			rep.Results[i].Outcome = harness.NotApplicable
			code = 0
			for _, x := range rep.Results {
				if x.Outcome == harness.Breach && x.ID != "planted-binary-exec" {
					code = 1
				}
			}
		}
		o := outcomes(&rep)
		if code != 0 || len(o[harness.Breach])+len(o[harness.Error]) != 0 {
			t.Errorf("exit %d; breaches %v, errors %v", code, o[harness.Breach], o[harness.Error])
			for _, r := range rep.Results {
				if r.Outcome == harness.Breach || r.Outcome == harness.Error {
					t.Logf("%s: %s %+v", r.ID, r.Reason, r.Findings)
				}
			}
		}
		for _, id := range []string{"fork-bomb-shell", "memory-bomb", "disk-fill", "output-flood-python", "sleep-past-timeout",
			"tcp-exfil-loopback", "udp-exfil-loopback", "dns-exfil", "cloud-metadata", "docker-socket", "capabilities",
			"setuid-root", "mknod-device", "kernel-surface", "cross-call-leak", "server-killed-mid-call", "setsid-survivor"} {
			if !slices.Contains(o[harness.Contained], id) {
				t.Errorf("%s not contained", id)
			}
		}

		// wall_time's bound is calibrated by this run's own trivial calls, and says so
		for _, r := range rep.Results {
			for _, f := range r.Findings {
				if f.Detector == "wall_time" && !strings.Contains(f.Detail, "measured trivial-call p90") {
					t.Errorf("%s: wall_time's bound is not calibrated: %s", r.ID, f.Detail)
				}
			}
		}
	})
	t.Run("controls", func(t *testing.T) {
		parallel(t)
		start := time.Now()
		out, stderr, code := runBin(t, "harness", "--controls", "--scheme", "docker", "--json")
		defer func() { t.Logf("controls: %s", time.Since(start)) }()
		var rs []harness.ControlResult
		if err := json.Unmarshal([]byte(out), &rs); err != nil {
			t.Fatalf("controls --json: %v\n%s\n%s", err, out, stderr)
		}
		if len(rs) < 12 {
			t.Errorf("%d docker controls", len(rs))
		}
		for i, r := range rs {
			if !r.Fired && r.Scenario != "" {
				// a staged control that races the container's removal (survivors on
				// disguised-survivor) may miss its moment on a loaded machine: it must fire on a
				// second run of its own, or the detector is silent
				out, _, _ := runBin(t, "harness", "--controls", "--scheme", "docker", "-s", r.Scenario, "--json")
				var again []harness.ControlResult
				if json.Unmarshal([]byte(out), &again) == nil {
					for _, a := range again {
						if a.Detector == r.Detector && a.Fired {
							t.Logf("control %s/%s fired on its second run (the first: %s)", r.Detector, r.Scenario, r.Detail)
							r = a
							rs[i] = a
						}
					}
				}
			}
			if !r.Fired {
				t.Errorf("detector %s silent under its docker control (%s: %s): %s %s", r.Detector, r.Kind, r.Weakness, r.Outcome, r.Detail)
			}
			// the calibrated bound still catches a call held past a tightened timeout
			if r.Detector == "wall_time" && (!r.Fired || !strings.Contains(r.Detail, "measured trivial-call p90")) {
				t.Errorf("wall_time control with the calibrated bound: fired %v: %s", r.Fired, r.Detail)
			}
		}
		silent := 0
		for _, r := range rs {
			if !r.Fired {
				silent++
			}
		}
		if code != 0 && silent > 0 { // a control that fired on its second run leaves the first run's exit 1
			t.Errorf("controls exit %d:\n%s", code, stderr)
		}
	})
}

// SIGTERM mid-call: serve removes its containers (the call's and the pool's) before it exits.
func TestDockerSIGTERMRemovesAll(t *testing.T) {
	eng := needDocker(t)
	cs, cmd := serveDocker(t, dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Pool = 2 }))
	if _, r, err := callDocker(context.Background(), cs, sd.ToolShell, map[string]any{"script": "echo warm"}); err != nil || r.Stdout != "warm\n" {
		t.Fatalf("%v %+v", err, r)
	}
	go callDocker(context.Background(), cs, sd.ToolShell, map[string]any{"script": "sleep 3600"})
	mine := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	// the call's container and the pool's: 3 when the call started one cold, 2 when it took a
	// pooled one (the pool refills at the call's end), as a fast engine makes the pool ready
	// before the second call (red once in CI that way)
	for deadline := time.Now().Add(20 * time.Second); countContainers(t, eng, mine) < 2; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("expected the call's container and the pool's, have %d", countContainers(t, eng, mine))
		}
	}
	time.Sleep(300 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	// The client's transport owns cmd (it Waits when the connection closes): watch the session end.
	done := make(chan error, 1)
	go func() { done <- cs.Wait() }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve did not exit within 30s of SIGTERM")
	}
	if n := countContainers(t, eng, mine); n != 0 {
		t.Errorf("%d containers of the SIGTERMed serve remain", n)
	}
}

// A serve SIGKILLed with a pooled container, then a `serve` whose client goes away at once
// (stdin closed, as a client that starts and quits, or a config check): when that serve has
// returned, the dead serve's containers are gone, and its log says it removed them. Any serve
// starting on this machine meanwhile (other tests share the engine) may reap them first: then
// the round proves nothing and is tried again, up to 3 times.
func TestDockerReapOnImmediateExit(t *testing.T) {
	eng := needDocker(t)
	const rounds = 6 // other packages' tests start serves on the same engine, and each reaps at its start
	for round := 1; round <= rounds; round++ {
		if reapRound(t, eng) {
			return
		}
		t.Logf("round %d: another serve reaped the dead serve's containers first; again", round)
	}
	t.Errorf("in %d rounds the serve with stdin closed never removed the dead serve's containers itself", rounds)
}

// reapRound reports whether the serve with stdin closed removed the dead serve's containers.
func reapRound(t *testing.T, eng *engine.Client) bool {
	t.Helper()
	_, cmd := serveDocker(t, dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Pool = 1 }))
	pidLabel := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	for deadline := time.Now().Add(30 * time.Second); countContainers(t, eng, pidLabel) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the pooled container never appeared")
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", cmd.Process.Pid)); err != nil || strings.Contains(string(b), ") Z ") {
			break
		}
	}
	// A create the killed serve had asked for can still complete at the engine after its death:
	// wait until the count holds still for 300 ms (with a pool of 1 already full, none is asked
	// for; a longer wait only widens the window in which another serve on this engine reaps
	// first, which CI, running other packages' docker tests beside, lost three rounds in a row).
	left := countContainers(t, eng, pidLabel)
	for deadline, still := time.Now().Add(10*time.Second), time.Now(); time.Now().Before(deadline) && time.Since(still) < 300*time.Millisecond; time.Sleep(50 * time.Millisecond) {
		if n := countContainers(t, eng, pidLabel); n != left {
			left, still = n, time.Now()
		}
	}
	quick := exec.Command(binPath, "serve", "--policy", dockerPolicy(t, nil)) // stdin: /dev/null
	var stderr lockedBuffer
	quick.Stderr = &stderr
	if err := quick.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- quick.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve with stdin closed: %v\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		quick.Process.Kill()
		t.Fatalf("serve with stdin closed did not return within 30s:\n%s", stderr.String())
	}
	if n := countContainers(t, eng, pidLabel); n != 0 {
		t.Errorf("%d of the dead serve's %d containers remain after a serve with stdin closed returned:\n%s", n, left, stderr.String())
	}
	if left == 0 || !strings.Contains(stderr.String(), "removed containers left by serve instances that are no longer running") {
		return false
	}
	t.Logf("the dead serve left %d container(s); the next serve, stdin closed, removed them before returning", left)
	return true
}
