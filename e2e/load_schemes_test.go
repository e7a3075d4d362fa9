package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Load and faults over `serve --http` for the docker and e2b schemes (issue 13 item 2, issue 11's
// leak test): calls at concurrency over several sessions with max_concurrent honoured and no
// error beyond the policy's own refusals, timeouts and client cancels mixed in, a client that
// disconnects mid-call, and before/after counts of what the scheme creates (containers, E2B
// sandboxes) printed and equal. Every loop is bounded in count and time; all traffic stays on
// loopback.

// loadTally counts what the calls of a load run came to.
type loadTally struct {
	ok, timedOut, cancelled, refused, failed atomic.Int64
	mu                                       sync.Mutex
	intervals                                [][2]float64 // in-sandbox [start, end] of the calls that report it
	firstErr                                 sync.Once
}

func (l *loadTally) String() string {
	return fmt.Sprintf("ok %d, timed out as asked %d, cancelled by the client %d, refused (limits.max_concurrent) %d, failed %d",
		l.ok.Load(), l.timedOut.Load(), l.cancelled.Load(), l.refused.Load(), l.failed.Load())
}

// maxOverlap is the largest number of reported intervals running at one instant.
func (l *loadTally) maxOverlap() int {
	type ev struct {
		at    float64
		delta int
	}
	var evs []ev
	for _, iv := range l.intervals {
		evs = append(evs, ev{iv[0], 1}, ev{iv[1], -1})
	}
	sort.Slice(evs, func(i, j int) bool {
		if evs[i].at != evs[j].at {
			return evs[i].at < evs[j].at
		}
		return evs[i].delta < evs[j].delta // an end before a start at the same instant
	})
	n, m := 0, 0
	for _, e := range evs {
		n += e.delta
		m = max(m, n)
	}
	return m
}

// interval parses "START END" printed by a call.
func (l *loadTally) interval(stdout string) bool {
	f := strings.Fields(stdout)
	if len(f) != 2 {
		return false
	}
	a, err1 := strconv.ParseFloat(f[0], 64)
	b, err2 := strconv.ParseFloat(f[1], 64)
	if err1 != nil || err2 != nil || b < a {
		return false
	}
	l.mu.Lock()
	l.intervals = append(l.intervals, [2]float64{a, b})
	l.mu.Unlock()
	return true
}

// The kinds of call a load run mixes in.
const (
	callNormal    = iota // must run and report its interval
	callTimeout          // must time out (the tool's own timeout)
	callCancelled        // the client gives up mid-call: whatever it answered
)

// record tallies one call's outcome.
func (l *loadTally) record(t *testing.T, i, kind int, res *mcp.CallToolResult, r executor.Result, err error) {
	switch {
	case kind == callCancelled:
		l.cancelled.Add(1) // what is left of it is checked afterwards, outside
	case err != nil:
		l.fail(t, "call %d: %v", i, err)
	case res.IsError && strings.Contains(resultText(res), "limits.max_concurrent"):
		l.refused.Add(1)
	case res.IsError:
		l.fail(t, "call %d: %s", i, resultText(res))
	case kind == callTimeout && r.TimedOut:
		l.timedOut.Add(1)
	case kind == callTimeout:
		l.fail(t, "call %d did not time out: %+v", i, r)
	case r.ExitCode != 0 || r.TimedOut || !l.interval(r.Stdout):
		l.fail(t, "call %d: %+v", i, r)
	default:
		l.ok.Add(1)
	}
}

// httpSessions opens n MCP sessions to url.
func httpSessions(t *testing.T, url string, n int) []*mcp.ClientSession {
	css := make([]*mcp.ClientSession, n)
	for i := range css {
		css[i] = httpSession(t, url)
	}
	return css
}

func (l *loadTally) fail(t *testing.T, format string, args ...any) {
	l.failed.Add(1)
	l.firstErr.Do(func() { t.Errorf(format, args...) })
}

// runLoad makes n calls at concurrency conc over the sessions; call(i, ctx, cs) makes the i-th.
func runLoad(n, conc int, css []*mcp.ClientSession, call func(i int, cs *mcp.ClientSession)) time.Duration {
	start := time.Now()
	work := make(chan int, n)
	for i := range n {
		work <- i
	}
	close(work)
	var wg sync.WaitGroup
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				call(i, css[(g+i)%len(css)])
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// sleeper is a command line no other test runs: `sleep N` with N unique to the call, so the
// host's process list shows whether that call's program still runs (an outside detector).
func sleeper() (script, tag string) {
	n := 40000 + rand.IntN(50000)
	return fmt.Sprintf("sleep %d", n), fmt.Sprintf("sleep\x00%d\x00", n)
}

func waitProcs(tag string, want bool, within time.Duration) bool {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if (len(procsWith(tag)) > 0) == want {
			return true
		}
	}
	return (len(procsWith(tag)) > 0) == want
}

func waitDead(pid int, within time.Duration) {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
	}
}

// TestDockerLoadHTTP: issue 11's leak test. 32 calls (issue 11's 200 with
// MCPSANDBOX_TEST_DOCKER_LOAD_CALLS=200) at concurrency 16 over 8 HTTP sessions with
// max_concurrent 4 (pool 8, so the slots bind, not the pool), a quarter of them timing out or
// cancelled by their client; a client that disconnects mid-call; then serve SIGKILLed mid-call
// and a next serve, whose client goes away at once, cleaning up. The engine's container list,
// by this run's labels and in total, is the same before and after (counts printed); a
// difference made by another user of the engine is named, and fails only if it is ours.
func TestDockerLoadHTTP(t *testing.T) {
	eng := needDocker(t)
	// Each call creates and removes a container, and the engine's throughput bounds the run:
	// on the shared 2-CPU dev machine 200 calls took 107 s (load 10-15) and 121 s (load 12-22),
	// past the ~90 s this suite can give one test, so the default is 32 (about 20 s).
	n := 32
	if v, err := strconv.Atoi(os.Getenv("MCPSANDBOX_TEST_DOCKER_LOAD_CALLS")); err == nil && v > 0 {
		n = v
	}
	const conc, sessions, maxConc, pool = 16, 8, 4, 8
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Pool, p.Limits.MaxConcurrent, p.Limits.Timeout = pool, maxConc, policy.Duration{Duration: 30 * time.Second}
	})
	pol, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	runLabel := sd.LabelPolicy + "=" + pol.Hash()[:16] // this run's policy: no other test's
	before := containerSet(t, eng, "")
	oursBefore, runBefore := countContainers(t, eng, sd.LabelApp), countContainers(t, eng, runLabel)
	url, cmd, _, logs := startHTTPServeWith(t, []string{"--policy", path})
	pidLabel := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	css := httpSessions(t, url, sessions)
	var l loadTally
	took := runLoad(n, conc, css, func(i int, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		tool, args := sd.ToolPython, map[string]any{"code": "import time\ns = time.time()\ntime.sleep(0.3)\nprint('%.6f %.6f' % (s, time.time()))"}
		switch i % 8 {
		case 1: // times out as asked
			tool, args = sd.ToolShell, map[string]any{"script": "sleep 3600", "timeout": 0.5}
		case 2: // the client gives up mid-call
			tool, args = sd.ToolShell, map[string]any{"script": "sleep 3600"}
			go func() { time.Sleep(time.Duration(200+rand.IntN(300)) * time.Millisecond); cancel() }()
		}
		res, r, err := callDocker(ctx, cs, tool, args)
		l.record(t, i, [8]int{1: callTimeout, 2: callCancelled}[i%8], res, r, err)
	})
	t.Logf("audit: %s", auditDurations(t, auditOf(t, path)))
	t.Logf("docker over HTTP: %d calls at concurrency %d over %d sessions in %s: %s", n, conc, sessions, took.Round(time.Millisecond), &l)
	if m := l.maxOverlap(); m > maxConc {
		t.Errorf("%d programs ran at once, max_concurrent is %d", m, maxConc)
	} else {
		t.Logf("max_concurrent %d: at most %d programs ran at once (measured inside the containers)", maxConc, m)
	}

	// A client that disconnects mid-call: its program is gone well before the call's timeout.
	script, tag := sleeper()
	vanish := httpSession(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	go callDocker(ctx, vanish, sd.ToolShell, map[string]any{"script": script})
	if !waitProcs(tag, true, 20*time.Second) {
		t.Fatal("the vanishing client's call never started")
	}
	cancel()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if !waitProcs(tag, false, 15*time.Second) {
		t.Errorf("the disconnected client's program still runs 15s later: %v", procsWith(tag))
	}
	vanish.Close()

	// serve SIGKILLed mid-call: it cannot clean up; its container's watchdog ends the program,
	// and the next serve removes the containers, even one whose client goes away at once.
	script, tag = sleeper()
	go callDocker(context.Background(), css[0], sd.ToolShell, map[string]any{"script": script})
	if !waitProcs(tag, true, 20*time.Second) {
		t.Fatal("the long call never started")
	}
	cmd.Process.Signal(syscall.SIGKILL)
	waitDead(cmd.Process.Pid, 10*time.Second)
	if !waitProcs(tag, false, 15*time.Second) {
		t.Errorf("the killed serve's program still runs 15s later")
	}
	left := countContainers(t, eng, pidLabel)
	next := exec.Command(binPath, "serve", "--policy", path) // stdin: /dev/null
	if out, err := next.CombinedOutput(); err != nil {
		t.Errorf("the next serve: %v\n%s", err, out)
	}
	// A removal the engine still carries out when the next serve has exited (a loaded engine:
	// CI beside other work) is listed for a moment: the judgement waits for it to settle.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if countContainers(t, eng, pidLabel) == 0 && countContainers(t, eng, runLabel) == runBefore {
			break
		}
	}
	after := containerSet(t, eng, "")
	oursAfter, runAfter := countContainers(t, eng, sd.LabelApp), countContainers(t, eng, runLabel)
	t.Logf("containers of the killed serve: %d at the kill, %d after the next serve (want 0)", left, countContainers(t, eng, pidLabel))
	t.Logf("engine's containers: before %d, after %d; labelled mcpsandbox: before %d, after %d; of this run (%s): before %d, after %d",
		len(before), len(after), oursBefore, oursAfter, runLabel, runBefore, runAfter)
	if n := countContainers(t, eng, pidLabel); n != 0 {
		t.Errorf("%d containers of the SIGKILLed serve remain", n)
	}
	if runAfter != runBefore {
		t.Errorf("containers of this run's policy: %d before, %d after", runBefore, runAfter)
	}
	for id, labels := range after {
		if _, was := before[id]; !was {
			if labels[sd.LabelPolicy] == pol.Hash()[:16] {
				t.Errorf("container %.12s of this run was left: %v", id, labels)
			} else {
				t.Logf("another user of the engine made container %.12s meanwhile (pid label %q)", id, labels[sd.LabelPID])
			}
		}
	}
	for id, labels := range before {
		if _, is := after[id]; !is {
			t.Logf("another user of the engine removed container %.12s meanwhile (pid label %q)", id, labels[sd.LabelPID])
		}
	}
	if t.Failed() {
		t.Logf("serve log:\n%s", logs.String())
	}
}

// TestE2BLoadHTTP: the e2b scheme over `serve --http` against the local E2B server: 200 calls
// at concurrency 32 over 8 sessions (reuse = session: one sandbox each) with max_concurrent 8;
// a client that disconnects mid-call; then SIGTERM. The fake's sandboxes and processes: none
// before, one per session during, none after.
func TestE2BLoadHTTP(t *testing.T) {
	fake, err := e2bfake.New(e2bfake.Options{APIKey: e2bKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	const n, conc, sessions, maxConc = 200, 32, 8, 8
	root := t.TempDir()
	p := policy.Default(e2bsec.Name)
	p.Name, e2bsec.Of(p).APIKeyEnv, e2bsec.Of(p).Reuse = "e2e-e2b-load", e2bKeyEnv, "session"
	// above the sessions this test opens (8, 2 that cancel, 1 that vanishes): one sandbox each,
	// none evicted (e2b.max_sessions's eviction is TestE2BSessionCap's)
	e2bsec.Of(p).MaxSessions = 16
	p.Limits.MaxConcurrent, p.Limits.Timeout.Duration = maxConc, 20*time.Second
	p.Audit.Path = filepath.Join(root, "audit.jsonl")
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(root, "policy.toml")
	write(t, path, string(b), 0o644)
	beforeSB, beforeProcs := fake.Count(), fake.Stats().LiveProcs

	url, cmd, exited, logs := startHTTPServeWith(t, []string{"--policy", path}, e2bKeyEnv+"="+e2bKey,
		"E2B_API_URL="+fake.URL(), "E2B_SANDBOX_URL="+fake.URL(), "E2B_DOMAIN="+fake.Domain())
	css, cancelSessions := httpSessions(t, url, sessions), httpSessions(t, url, 2)
	var l loadTally
	took := runLoad(n, conc, css, func(i int, cs *mcp.ClientSession) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		args := map[string]any{"command": "date +%s.%N; sleep 0.05; date +%s.%N"}
		switch i % 8 {
		case 2: // the client gives up mid-call, in sessions of their own: a call broken by a
			// cancel ends its session's sandbox, and with it the session's other running calls
			// (a known defect of internal/schemes/e2b/sandbox, see the OPS report), so they must not share one.
			args = map[string]any{"command": "sleep 3600"}
			cs = cancelSessions[i%len(cancelSessions)]
			go func() { time.Sleep(time.Duration(200+rand.IntN(300)) * time.Millisecond); cancel() }()
		}
		res, r, err := callDocker(ctx, cs, "run_command", args)
		l.record(t, i, [8]int{2: callCancelled}[i%8], res, r, err)
	})
	t.Logf("audit: %s", auditDurations(t, p.Audit.Path))
	t.Logf("e2b over HTTP: %d calls at concurrency %d over %d sessions in %s: %s", n, conc, sessions, took.Round(time.Millisecond), &l)
	if m := l.maxOverlap(); m > maxConc {
		t.Errorf("%d programs ran at once, max_concurrent is %d", m, maxConc)
	} else {
		t.Logf("max_concurrent %d: at most %d programs ran at once (measured inside the sandboxes)", maxConc, m)
	}
	if got := fake.Count(); got > sessions+len(cancelSessions) || got < sessions {
		t.Errorf("reuse = session: %d sandboxes for %d sessions (+%d whose calls were cancelled)", got, sessions, len(cancelSessions))
	}
	for _, cs := range cancelSessions {
		cs.Close()
	}
	// The cancelled calls' processes are gone (their sandboxes stay: their sessions go on).
	if !eventuallyWithin(10*time.Second, func() bool { return fake.Stats().LiveProcs == 0 }) {
		t.Errorf("processes of cancelled calls still run in the sandboxes: %+v", fake.Stats())
	}

	// A client that disconnects mid-call without ending its session: its process is killed.
	vanish := httpSession(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	go callDocker(ctx, vanish, "run_command", map[string]any{"command": "sleep 3600"})
	if !eventuallyWithin(20*time.Second, func() bool { return fake.Stats().LiveProcs == 1 }) {
		t.Fatalf("the vanishing client's call never started: %+v", fake.Stats())
	}
	cancel()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if !eventuallyWithin(15*time.Second, func() bool { return fake.Stats().LiveProcs == 0 }) {
		t.Errorf("the disconnected client's process still runs: %+v", fake.Stats())
	}
	// Sessions that end (HTTP DELETE) lose their sandbox at once.
	for _, cs := range css[:4] {
		cs.Close()
	}
	// (the vanished client's session may be over too: its sandbox is gone or going)
	if !eventuallyWithin(10*time.Second, func() bool { return fake.Count() <= sessions-4+1 }) { // +1: the vanished client's
		t.Errorf("after 4 sessions ended: %d sandboxes, want at most %d", fake.Count(), sessions-4+1)
	}
	// SIGTERM ends the rest: every sandbox is killed on the way out.
	sigterm(t, cmd, exited, 30*time.Second)
	afterSB, afterProcs := fake.Count(), fake.Stats().LiveProcs
	t.Logf("E2B sandboxes: before %d, after %d; their processes: before %d, after %d (%+v)", beforeSB, afterSB, beforeProcs, afterProcs, fake.Stats())
	if afterSB != beforeSB || afterProcs != beforeProcs {
		t.Errorf("E2B sandboxes %d -> %d, processes %d -> %d", beforeSB, afterSB, beforeProcs, afterProcs)
	}
	if t.Failed() {
		t.Logf("serve log:\n%s", logs.String())
	}
}

// auditDurations summarises the audit log: per decision, how many calls and their longest
// duration (what a cancelled call held its slot for).
func auditDurations(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	type agg struct{ n, maxMS, sumMS int64 }
	per := map[string]*agg{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var e struct {
			Decision   string
			DurationMS int64 `json:"duration_ms"`
		}
		if json.Unmarshal([]byte(line), &e) != nil {
			continue
		}
		a := per[e.Decision]
		if a == nil {
			a = &agg{}
			per[e.Decision] = a
		}
		a.n++
		a.sumMS += e.DurationMS
		a.maxMS = max(a.maxMS, e.DurationMS)
	}
	var out []string
	for d, a := range per {
		out = append(out, fmt.Sprintf("%s %d (mean %d ms, max %d ms)", d, a.n, a.sumMS/a.n, a.maxMS))
	}
	sort.Strings(out)
	return strings.Join(out, "; ")
}

func auditOf(t *testing.T, policyPath string) string {
	p, err := policy.Load(policyPath)
	if err != nil {
		t.Fatal(err)
	}
	return p.Audit.Path
}

func eventuallyWithin(d time.Duration, cond func() bool) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// The docker engine restarted mid-call (opt-in: MCPSANDBOX_TEST_RESTART_DOCKERD=1, because it
// stops every container on the engine, other tests' too; .ci/run runs it alone, after the
// suite). The engine is the one DOCKER_HOST names; its dockerd's pid is read from
// MCPSANDBOX_TEST_DOCKERD_PIDFILE (default /var/run/docker.pid) and it is started again with the
// very command line it had. Over `serve --http`: the call in flight gets a clear error, a call
// while the engine is down is told the engine is unreachable and how to start it, serve
// recovers once the engine is back (calls run again, the pool refills), and nothing leaks.
func TestDockerEngineRestartHTTP(t *testing.T) {
	if os.Getenv("MCPSANDBOX_TEST_RESTART_DOCKERD") != "1" {
		t.Skip("SKIP (opt-in): set MCPSANDBOX_TEST_RESTART_DOCKERD=1 to restart the docker engine mid-call; it stops every container on that engine, so run it alone (.ci/run does, after the suite)")
	}
	eng := needDocker(t)
	pidfile := os.Getenv("MCPSANDBOX_TEST_DOCKERD_PIDFILE")
	if pidfile == "" {
		pidfile = "/var/run/docker.pid"
	}
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Pool, p.Limits.MaxConcurrent, p.Limits.Timeout = 2, 4, policy.Duration{Duration: 30 * time.Second}
	})
	url, cmd, exited, logs := startHTTPServeWith(t, []string{"--policy", path, "--log-level", "debug"})
	pidLabel := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	cs := httpSession(t, url)
	call := func(script string, within time.Duration) (*mcp.CallToolResult, string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), within)
		defer cancel()
		res, r, err := callDocker(ctx, cs, sd.ToolShell, map[string]any{"script": script})
		return res, r.Stdout, err
	}
	if res, out, err := call("echo warm", 60*time.Second); err != nil || res.IsError || out != "warm\n" {
		t.Fatalf("before the restart: %v %s %q", err, resultText(res), out)
	}

	// A call in flight when the engine goes away.
	script, tag := sleeper()
	inflight := make(chan string, 1)
	go func() {
		start := time.Now()
		res, out, err := call(script, 120*time.Second)
		inflight <- fmt.Sprintf("after %s: err=%v isError=%v text=%q stdout=%q", time.Since(start).Round(time.Millisecond), err, res != nil && res.IsError, resultText(res), out)
	}()
	if !waitProcs(tag, true, 30*time.Second) {
		t.Fatal("the long call never started")
	}
	argv := stopDockerd(t, pidfile)
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			startDockerd(t, argv, eng)
		}
	})
	var got string
	select {
	case got = <-inflight:
	case <-time.After(60 * time.Second):
		t.Fatal("the call in flight got no answer within 60s of the engine stopping")
	}
	t.Logf("the call in flight when the engine stopped: %s", got)
	// dockerd's shutdown stops its containers (SIGTERM, then SIGKILL): the call ends at once
	// with the program killed. Best is an error naming the engine; today serve reports the
	// engine's exit status (143 or 137) without saying the engine stopped it (see the report).
	named := strings.Contains(got, "isError=true") && (strings.Contains(strings.ToLower(got), "engine") || strings.Contains(strings.ToLower(got), "docker"))
	killed := strings.Contains(got, "exit_code: 143") || strings.Contains(got, "exit_code: 137")
	switch {
	case named:
	case killed:
		t.Logf("GAP: the call in flight ended killed (%s) without saying the engine stopped", got)
	default:
		t.Errorf("the call in flight got neither an error naming the engine nor a killed status: %s", got)
	}
	// While the engine is down: refused in words, naming the engine and how to start it.
	res, _, err := call("echo down", 60*time.Second)
	t.Logf("a call while the engine is down: err=%v text=%q", err, resultText(res))
	if err != nil || !res.IsError || !strings.Contains(resultText(res), "engine") {
		t.Errorf("a call while the engine is down: %v %q", err, resultText(res))
	}

	startDockerd(t, argv, eng)
	restarted = true
	// serve recovers: calls run again (bounded: the pool refills after the engine's return).
	var last string
	ok := false
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		res, out, err := call("echo back", 30*time.Second)
		if err == nil && !res.IsError && out == "back\n" {
			ok = true
			break
		}
		last = fmt.Sprintf("%v %s %q", err, resultText(res), out)
	}
	if !ok {
		t.Fatalf("serve did not recover within 60s of the engine's return: %s", last)
	}
	for i := range 5 {
		if res, out, err := call("echo again", 30*time.Second); err != nil || res.IsError || out != "again\n" {
			t.Errorf("call %d after the recovery: %v %s %q", i, err, resultText(res), out)
		}
	}
	cs.Close()
	sigterm(t, cmd, exited, 30*time.Second)
	if n := countContainers(t, eng, pidLabel); n != 0 {
		t.Errorf("%d containers of serve remain after the engine restart and SIGTERM", n)
	}
	if len(procsWith(tag)) > 0 {
		t.Errorf("the in-flight call's program outlived the restart")
	}
	t.Logf("containers of this serve after SIGTERM: %d (want 0)", countContainers(t, eng, pidLabel))
	if t.Failed() {
		t.Logf("serve log:\n%s", logs.String())
	}
}

// stopDockerd stops the engine's dockerd (by the pid in its pidfile) and returns its command
// line, to start it again.
func stopDockerd(t *testing.T, pidfile string) []string {
	t.Helper()
	b, err := os.ReadFile(pidfile)
	if err != nil {
		t.Fatalf("read dockerd's pidfile (set MCPSANDBOX_TEST_DOCKERD_PIDFILE): %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("pidfile %s: %v", pidfile, err)
	}
	cl, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil || !strings.Contains(filepath.Base(strings.Split(string(cl), "\x00")[0]), "dockerd") {
		t.Fatalf("pid %d (from %s) is not a running dockerd: %v %q", pid, pidfile, err, cl)
	}
	argv := strings.Split(strings.TrimRight(string(cl), "\x00"), "\x00")
	t.Logf("stopping dockerd pid %d: %q", pid, argv)
	if err := signalPID(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); err != nil {
			return argv
		}
	}
	t.Fatalf("dockerd pid %d did not stop within 60s", pid)
	return nil
}

// startDockerd starts dockerd with argv, detached (it outlives the test; its log goes to
// $TMPDIR/mcpsandbox-test-dockerd.log), and waits until the engine answers.
func startDockerd(t *testing.T, argv []string, eng *engine.Client) {
	t.Helper()
	logPath := filepath.Join(os.TempDir(), "mcpsandbox-test-dockerd.log")
	lf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lf.Close()
	d := exec.Command(argv[0], argv[1:]...)
	d.Stdout, d.Stderr, d.Dir = lf, lf, "/"
	d.SysProcAttr = detachedAttr()
	if err := d.Start(); err != nil {
		t.Fatalf("start dockerd again (%q): %v", argv, err)
	}
	t.Logf("started dockerd again: pid %d, log %s", d.Process.Pid, logPath)
	d.Process.Release()
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err := eng.Version(ctx)
		cancel()
		if err == nil {
			return
		}
	}
	t.Fatalf("the restarted dockerd did not answer within 60s (log: %s)", logPath)
}
