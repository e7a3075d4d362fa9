package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/procid"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

const (
	testKey = "e2b_5ecre7a1b2c3d4e5f60718293a4b5c6d7e8f9012"
	keyEnv  = "MCPSANDBOX_TEST_E2B_KEY"
)

type env struct {
	t    *testing.T
	fake *e2bfake.Server
	ex   *Executor
	logs *syncBuf
}

type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

func newFake(t *testing.T) *e2bfake.Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server (internal/harness/e2bfake) runs on Linux only")
	}
	f, err := e2bfake.New(e2bfake.Options{APIKey: testKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func testPolicy(reuse string) *policy.Policy {
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).APIKeyEnv = keyEnv
	e2bsec.Of(p).Reuse = reuse
	e2bsec.Of(p).SandboxTimeout.Duration = time.Minute
	return p
}

// newEnv starts a fake and an executor pointed at it through the variables the SDKs use.
func newEnv(t *testing.T, p *policy.Policy, vars map[string]string) *env {
	t.Helper()
	return envOn(t, newFake(t), p, vars)
}

// envOn is newEnv on the fake f (vars may point E2B_API_URL at a hostile front of it).
func envOn(t *testing.T, f *e2bfake.Server, p *policy.Policy, vars map[string]string) *env {
	t.Helper()
	e := &env{t: t, fake: f, logs: &syncBuf{}}
	base := map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL(), "E2B_DOMAIN": f.Domain()}
	for k, v := range vars {
		base[k] = v
	}
	ex, err := New(p, Options{Getenv: func(k string) string { return base[k] }, Retries: 2, Backoff: 5 * time.Millisecond,
		RequestTimeout: 2 * time.Second, Logger: slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ex.Close() })
	<-ex.Reaped()
	e.ex = ex
	return e
}

func (e *env) tool(name string) executor.Tool {
	for _, t := range e.ex.Tools() {
		if t.Name == name {
			return t
		}
	}
	e.t.Fatalf("no tool %s", name)
	return executor.Tool{}
}

// run calls a tool the way serve does, with a watchdog: a call that outlives its timeout by 10 s hangs.
func (e *env) run(name, session string, timeout time.Duration, maxOut int, args map[string]any) (*executor.Result, error) {
	e.t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	type rr struct {
		r   *executor.Result
		err error
	}
	ch := make(chan rr, 1)
	tool := e.tool(name) // before the goroutine: a missing tool ends the test (Fatalf)
	go func() {
		r, err := tool.Run(ctx, executor.Call{Args: raw, Timeout: timeout, MaxOutput: maxOut, Session: session})
		ch <- rr{r, err}
	}()
	select {
	case x := <-ch:
		return x.r, x.err
	case <-time.After(timeout + 10*time.Second):
		// Errorf, not Fatalf: run is also called from goroutines (a call left running).
		e.t.Errorf("%s hung: no answer %s after its %s timeout", name, 10*time.Second, timeout)
		return nil, fmt.Errorf("%s hung", name)
	}
}

// settled waits (bounded) for the fake to have no live sandboxes and no live processes.
func (e *env) noLeaks() {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		st := e.fake.Stats()
		if e.fake.Count() == 0 && st.LiveProcs == 0 {
			return
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("leaked: %d live sandboxes %+v, stats %+v", e.fake.Count(), e.fake.Live(), st)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestRunCommandCallMode(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	r, err := e.run("run_command", "s1", 20*time.Second, 1<<16, map[string]any{"command": "echo out; echo err >&2; pwd >/dev/null; exit 3"})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 3 || r.Stdout != "out\n" || r.Stderr != "err\n" || r.Truncated || r.TimedOut {
		t.Fatalf("result %+v", r)
	}
	e.noLeaks()
	if st := e.fake.Stats(); st.Created != 1 || st.Killed != 1 {
		t.Fatalf("reuse=call must kill the call's sandbox: %+v", st)
	}
	// Its lifetime at E2B is the call's timeout plus a grace, not sandbox_timeout: a serve
	// killed mid-call leaves it running no longer.
	go e.run("run_command", "s1", 20*time.Second, 1<<16, map[string]any{"command": "sleep 1"})
	for e.fake.Count() == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	if left := time.Until(e.fake.Live()[0].EndAt); left > 20*time.Second+callGrace || left < 20*time.Second {
		t.Fatalf("reuse=call sandbox lifetime %s, want the call's 20s + %s", left, callGrace)
	}
	e.noLeaks()
	// The sandbox was labelled as ours, with this serve instance.
	if _, err := e.run("run_command", "s1", 20*time.Second, 1<<16, map[string]any{"command": "true"}); err != nil {
		t.Fatal(err)
	}
	if st := e.fake.Stats(); st.Created != 3 || st.Killed != 3 {
		t.Fatalf("third call: %+v", st)
	}
}

func TestRunCodeResultAndException(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	r, err := e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "print('hi')\n6*7"})
	if err != nil {
		t.Fatal(err)
	}
	if r.ExitCode != 0 || r.Stdout != "hi\n42\n" || r.TimedOut {
		t.Fatalf("result %+v", r)
	}
	_, err = e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "print('before')\ndef f():\n  return 1/0\nf()"})
	var ce *CodeError
	if !errors.As(err, &ce) {
		t.Fatalf("an exception must be a tool error (*CodeError), got %v", err)
	}
	if ce.Name != "ZeroDivisionError" || ce.Value != "division by zero" || !strings.Contains(ce.Traceback, "in f") || ce.Stdout != "before\n" {
		t.Fatalf("exception %+v", ce)
	}
	for _, want := range []string{"ZeroDivisionError: division by zero", "--- traceback ---", "--- stdout ---\nbefore"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error text lacks %q:\n%s", want, err)
		}
	}
	r, err = e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "echo from-bash", "language": "bash"})
	if err != nil || r.Stdout != "from-bash\n" {
		t.Fatalf("bash: %+v %v", r, err)
	}
	_, err = e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "1", "language": "$(rm -rf)"})
	var ref *executor.Refusal
	if !errors.As(err, &ref) {
		t.Fatalf("a bad language must be refused, got %v", err)
	}
	e.noLeaks()
}

func TestOutputCappedWhileStreaming(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	r, err := e.run("run_command", "s", 20*time.Second, 1000, map[string]any{"command": "head -c 3000000 /dev/zero | tr '\\0' x; echo tail >&2"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Stdout) != 1000 || !r.Truncated || r.Stderr != "tail\n" || r.ExitCode != 0 {
		t.Fatalf("len(stdout)=%d truncated=%v stderr=%q exit=%d", len(r.Stdout), r.Truncated, r.Stderr, r.ExitCode)
	}
	r, err = e.run("run_code", "s", 20*time.Second, 1000, map[string]any{"code": "print('y'*3000000)"})
	if err != nil || len(r.Stdout) != 1000 || !r.Truncated {
		t.Fatalf("run_code cap: len %d truncated %v err %v", len(r.Stdout), r != nil && r.Truncated, err)
	}
	e.noLeaks()
}

func TestTimeoutKillsTheSandbox(t *testing.T) {
	for _, reuse := range []string{"call", "session"} {
		t.Run(reuse, func(t *testing.T) {
			e := newEnv(t, testPolicy(reuse), nil)
			r, err := e.run("run_command", "s", 2*time.Second, 1<<16, map[string]any{"command": "echo started; sleep 30"})
			if err != nil {
				t.Fatal(err)
			}
			if !r.TimedOut || r.ExitCode != 137 || r.Stdout != "started\n" {
				t.Fatalf("result %+v", r)
			}
			r, err = e.run("run_code", "s", 2*time.Second, 1<<16, map[string]any{"code": "import time\nprint('go', flush=True)\nwhile True: time.sleep(0.01)"})
			if err != nil {
				t.Fatal(err)
			}
			if !r.TimedOut || r.Stdout != "go\n" {
				t.Fatalf("run_code result %+v", r)
			}
			// A timed-out call loses its sandbox in both modes: nothing keeps running.
			e.noLeaks()
		})
	}
}

func TestSessionReuseAndEnd(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	if _, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "echo kept > note"}); err != nil {
		t.Fatal(err)
	}
	r, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "cat note"})
	if err != nil || r.Stdout != "kept\n" {
		t.Fatalf("session A's second call must see its file: %+v %v", r, err)
	}
	r, err = e.run("run_command", "B", 20*time.Second, 1<<16, map[string]any{"command": "cat note"})
	if err != nil || r.ExitCode == 0 || r.Stdout != "" {
		t.Fatalf("session B must not see session A's sandbox: %+v %v", r, err)
	}
	if n := e.fake.Count(); n != 2 {
		t.Fatalf("two sessions, %d live sandboxes", n)
	}
	if st := e.fake.Stats(); st.Created != 2 {
		t.Fatalf("one sandbox per session: %+v", st)
	}
	e.ex.EndSession("A")
	if n := e.fake.Count(); n != 1 {
		t.Fatalf("EndSession(A) must kill A's sandbox: %d live", n)
	}
	e.ex.Close()
	e.noLeaks()
	if _, err := e.run("run_command", "B", 5*time.Second, 1<<16, map[string]any{"command": "true"}); err == nil {
		t.Fatal("a call after Close must fail")
	}
}

func TestSessionSandboxTimeoutAndExpiry(t *testing.T) {
	p := testPolicy("session")
	e2bsec.Of(p).SandboxTimeout.Duration = time.Second
	e := newEnv(t, p, nil)
	if _, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "true"}); err != nil {
		t.Fatal(err)
	}
	live := e.fake.Live()
	if len(live) != 1 || time.Until(live[0].EndAt) > 1100*time.Millisecond {
		t.Fatalf("the sandbox must be created with e2b.sandbox_timeout as its lifetime: %+v", live)
	}
	e.noLeaks() // it ends after sandbox_timeout
	// The next call of the session gets a new sandbox transparently.
	r, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "echo again"})
	if err != nil || r.Stdout != "again\n" {
		t.Fatalf("after expiry: %+v %v", r, err)
	}
	// A sandbox that E2B killed behind our back (expired early) is replaced once.
	id := e.fake.Live()[0].ID
	e.fake.Kill(id)
	r, err = e.run("run_code", "A", 20*time.Second, 1<<16, map[string]any{"code": "print(1)"})
	if err != nil || r.Stdout != "1\n" {
		t.Fatalf("after an outside kill: %+v %v", r, err)
	}
	if st := e.fake.Stats(); st.Created != 3 {
		t.Fatalf("want 3 sandboxes created, %+v", st)
	}
}

func TestCancelKillsTheSandbox(t *testing.T) {
	for _, reuse := range []string{"call", "session"} {
		t.Run(reuse, func(t *testing.T) {
			e := newEnv(t, testPolicy(reuse), nil)
			ctx, cancel := context.WithCancel(context.Background())
			raw, _ := json.Marshal(map[string]any{"command": "sleep 30"})
			go func() {
				for e.fake.Stats().LiveProcs == 0 {
					time.Sleep(10 * time.Millisecond)
				}
				cancel()
			}()
			_, err := e.tool("run_command").Run(ctx, executor.Call{Args: raw, Timeout: 30 * time.Second, MaxOutput: 100, Session: "s"})
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("a cancelled call returns the cancellation, got %v", err)
			}
			e.noLeaks()
		})
	}
}

func TestKeyNeverLeaves(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	r, err := e.run("run_command", "s", 20*time.Second, 1<<20, map[string]any{"command": "env; cat /proc/self/environ"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Stdout+r.Stderr, testKey) || strings.Contains(r.Stdout, keyEnv) {
		t.Fatal("the API key reached the sandbox's environment")
	}
	if !strings.Contains(r.Stdout, "E2BFAKE_SANDBOX=") {
		t.Fatalf("negative control: env output does not show the sandbox's environment: %q", r.Stdout)
	}
	for _, s := range e.fake.Live() {
		if len(s.EnvVars) != 0 {
			t.Fatalf("create sent env vars %v", s.EnvVars)
		}
	}
	// A hostile upstream echoing the key in an error and in output does not get it through.
	e.fake.SetFault(&e2bfake.Fault{Scope: "api", Status: 401, EchoKey: true})
	_, err = e.run("run_command", "other", 5*time.Second, 1<<16, map[string]any{"command": "true"})
	if err == nil || strings.Contains(err.Error(), testKey) {
		t.Fatalf("401 with an echoed key: %v", err)
	}
	e.fake.SetFault(nil)
	for _, l := range e.ex.Layers() {
		if strings.Contains(l.Detail, testKey) {
			t.Fatal("key in layers")
		}
	}
	e.ex.Close()
	if strings.Contains(e.logs.String(), testKey) {
		t.Fatalf("the key reached the log:\n%s", e.logs.String())
	}
}

func TestBadKey(t *testing.T) {
	e := newEnv(t, testPolicy("call"), map[string]string{keyEnv: "e2b_wrongwrongwrongwrongwrongwrong00000000"})
	_, err := e.run("run_command", "s", 5*time.Second, 1<<16, map[string]any{"command": "true"})
	if err == nil || !errors.Is(err, ErrUnauthorized) {
		t.Fatalf("want a 401 error, got %v", err)
	}
	msg := err.Error()
	if !strings.Contains(msg, "$"+keyEnv) || strings.Contains(msg, "wrongwrong") {
		t.Fatalf("the error must name the variable and never print the key: %s", msg)
	}
	if e.fake.Stats().Created != 0 {
		t.Fatal("created with a bad key")
	}

	ex, err := New(testPolicy("call"), Options{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	if err := ex.Ready(); err == nil || !strings.Contains(err.Error(), "$"+keyEnv) {
		t.Fatalf("a missing key must stop serve with the variable's name: %v", err)
	}
}

func TestRetriesThenQuota(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	e.fake.SetFault(&e2bfake.Fault{Scope: "api", Status: 503, Times: 2})
	if _, err := e.run("run_command", "s", 20*time.Second, 1<<16, map[string]any{"command": "true"}); err != nil {
		t.Fatalf("two 503s then success must be retried: %v", err)
	}
	e.noLeaks()
	before := e.fake.FaultHits()
	e.fake.SetFault(&e2bfake.Fault{Scope: "api", Status: 429})
	_, err := e.run("run_command", "s", 20*time.Second, 1<<16, map[string]any{"command": "true"})
	if err == nil || !strings.Contains(err.Error(), "quota") || !strings.Contains(err.Error(), "429") {
		t.Fatalf("persistent 429: %v", err)
	}
	if n := e.fake.FaultHits() - before; n != 3 { // Retries: 2 → 3 attempts
		t.Fatalf("retries must be bounded: %d attempts", n)
	}
	e.fake.SetFault(nil)
	e.fake.SetFault(&e2bfake.Fault{Scope: "envd", Status: 502})
	_, err = e.run("run_command", "s", 20*time.Second, 1<<16, map[string]any{"command": "true"})
	if err == nil || !errors.Is(err, ErrSandboxGone) || !strings.Contains(err.Error(), "sandbox_timeout") {
		t.Fatalf("a 502 from the sandbox is a gone sandbox: %v", err)
	}
	e.fake.SetFault(nil)
	e.noLeaks()
}

func TestUnreachableAPI(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	p := testPolicy("call")
	e2bsec.Of(p).APIURL = "http://" + addr // the policy's api_url wins over E2B_API_URL
	e := newEnv(t, p, nil)
	_, err = e.run("run_command", "s", 3*time.Second, 1<<16, map[string]any{"command": "true"})
	if err == nil || !strings.Contains(err.Error(), "cannot reach the E2B API at http://"+addr) {
		t.Fatalf("want a clear unreachable error, got %v", err)
	}
}

// TestHostileUpstream: an upstream that hangs, streams forever, sends giant or garbage frames
// never hangs a call, never makes it hold more than its caps, and is reported as an error (or
// a timeout) — and the call's sandbox is still killed.
func TestHostileUpstream(t *testing.T) {
	cases := []struct {
		name  string
		fault e2bfake.Fault
		tool  string
		want  string // "" = a timed-out result
	}{
		{"api hangs", e2bfake.Fault{Scope: "api", Hang: true, Times: 1}, "run_command", "did not answer in time"},
		{"api endless body", e2bfake.Fault{Scope: "api", Huge: true, Times: 1}, "run_command", "exceeds"},
		{"api garbage", e2bfake.Fault{Scope: "api", Garbage: true, Times: 1}, "run_command", "not the expected JSON"},
		{"envd hangs", e2bfake.Fault{Scope: "envd", Hang: true}, "run_command", ""},
		{"envd endless output", e2bfake.Fault{Scope: "envd", Huge: true}, "run_command", ""},
		{"envd 4 GiB frame", e2bfake.Fault{Scope: "envd", Garbage: true}, "run_command", "refusing"},
		{"interpreter hangs", e2bfake.Fault{Scope: "execute", Hang: true}, "run_code", ""},
		{"interpreter endless line", e2bfake.Fault{Scope: "execute", Huge: true}, "run_code", "refusing"},
		{"interpreter garbage", e2bfake.Fault{Scope: "execute", Garbage: true}, "run_code", "not JSON"},
		{"interpreter slow then fine", e2bfake.Fault{Scope: "execute", Delay: 300 * time.Millisecond}, "run_code", "ok"},
	}
	e := newEnv(t, testPolicy("call"), nil)
	var ms runtime.MemStats
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := c.fault
			e.fake.SetFault(&f)
			defer e.fake.SetFault(nil)
			args := map[string]any{"command": "echo ok"}
			if c.tool == "run_code" {
				args = map[string]any{"code": "print('ok')"}
			}
			timeout := 1500 * time.Millisecond
			if c.want != "" {
				timeout = 15 * time.Second // the error must come from the defence, not the deadline
			}
			r, err := e.run(c.tool, "s", timeout, 4096, args)
			switch {
			case c.want == "ok":
				if err != nil || r.Stdout != "ok\n" {
					t.Fatalf("%+v %v", r, err)
				}
			case c.want == "":
				if err != nil || !r.TimedOut || len(r.Stdout) > 4096 {
					t.Fatalf("want a timed-out result within the caps, got %+v %v", r, err)
				}
			default:
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("want an error with %q, got %+v %v", c.want, r, err)
				}
			}
			e.fake.SetFault(nil)
			e.noLeaks()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > 256<<20 {
				t.Fatalf("heap in use %d MiB after a hostile stream", ms.HeapInuse>>20)
			}
		})
	}
}

// TestReapDeadInstances: sandboxes labelled by a serve of this machine, boot and pid namespace
// that is gone are killed at start; those of a live serve, and those of a serve this one cannot
// judge (another machine of the same host name, another pid namespace: atk37 F3) are left
// alone; those of an earlier boot this machine ran are killed, those of a boot it never ran (a
// clone's sharing the machine id: atk37b F5) left. Red with e2b-reap-by-pid-alone and
// procid-other-boot-dead.
func TestReapDeadInstances(t *testing.T) {
	f := newFake(t)
	c := NewClient(Config{APIKey: testKey, APIURL: f.URL(), SandboxURL: f.URL()})
	me := procid.Self()
	if me.Machine == "" || me.Boot == "" || me.PIDNS == "" {
		t.Skipf("no machine id, boot id or pid namespace here (%+v): no serve is judged dead", me)
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadPID := dead.Process.Pid
	ppid := os.Getppid()
	pstart, err := procid.StartTime(ppid)
	if err != nil {
		t.Fatal(err)
	}
	mk := func(pid int, start uint64, change func(map[string]string)) string {
		l := map[string]string{
			LabelOwner: "1", LabelHost: me.Host, LabelPID: strconv.Itoa(pid), LabelStart: strconv.FormatUint(start, 10),
			LabelInstance: fmt.Sprintf("%s/%d/%d", me.Host, pid, start), LabelMachine: me.Machine, LabelBoot: me.Boot, LabelPIDNS: me.PIDNS}
		if change != nil {
			change(l)
		}
		sb, err := c.Create(context.Background(), CreateOptions{Template: "base", Timeout: time.Minute, Metadata: l})
		if err != nil {
			t.Fatal(err)
		}
		return sb.ID
	}
	deadID := mk(deadPID, 1, nil)
	reusedID := mk(ppid, 1, nil)    // the pid is alive but is another process now
	liveID := mk(ppid, pstart, nil) // a live serve
	otherMachine := mk(deadPID, 1, func(l map[string]string) { l[LabelMachine] = "another-machine-of-this-name" })
	otherNS := mk(deadPID, 1, func(l map[string]string) { l[LabelPIDNS] = "pid:[1]" })
	unlabelled := mk(deadPID, 1, func(l map[string]string) { delete(l, LabelMachine) }) // an older serve's
	// a boot this machine ran
	if err := procid.NoteBoot("an-earlier-boot"); err != nil {
		t.Fatal(err)
	}
	earlierBoot := mk(ppid, pstart, func(l map[string]string) { l[LabelBoot] = "an-earlier-boot" })
	// a clone sharing the machine id runs a boot of its own, not in this machine's record (atk37b F5)
	cloneBoot := mk(deadPID, 1, func(l map[string]string) { l[LabelBoot] = "a-clones-live-boot" })
	other, err := c.Create(context.Background(), CreateOptions{Template: "base", Timeout: time.Minute,
		Metadata: map[string]string{"owner": "someone-else"}})
	if err != nil {
		t.Fatal(err)
	}
	left := sweep(t, f, map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}, nil)
	for id, want := range map[string]bool{deadID: false, reusedID: false, earlierBoot: false, liveID: true, other.ID: true,
		otherMachine: true, otherNS: true, unlabelled: true, cloneBoot: true} {
		if left[id] != want {
			t.Errorf("after the sweep, sandbox %s alive %v, want %v", id, left[id], want)
		}
	}
}

// TestSessionLeash: a session's sandbox lives at E2B a leash at a time, extended while serve
// runs; when serve dies without cleaning up (no more keepalives, no kill), it ends within a leash.
func TestSessionLeash(t *testing.T) {
	f := newFake(t)
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}
	ex, err := New(testPolicy("session"), Options{Getenv: func(k string) string { return vars[k] }, NoReap: true, Leash: 1500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	raw, _ := json.Marshal(map[string]any{"command": "true"})
	if _, err := ex.Tools()[1].Run(context.Background(), executor.Call{Args: raw, Timeout: 10 * time.Second, MaxOutput: 100, Session: "s"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // twice the leash
	if f.Count() != 1 || f.Requests("timeout") < 2 {
		t.Fatalf("the keepalive must hold the sandbox past its leash: live %d, extensions %d", f.Count(), f.Requests("timeout"))
	}
	ex.cancel() // serve "dies": keepalives stop, nothing kills the sandbox
	deadline := time.Now().Add(5 * time.Second)
	for f.Count() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the session's sandbox outlived its leash after serve stopped keeping it alive")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if f.Stats().Expired != 1 {
		t.Fatalf("want the sandbox expired by E2B, %+v", f.Stats())
	}
}

// A session's call that times out must not take its sibling calls down with it: the broken
// sandbox is retired (the session's next call gets a fresh one) and killed when the last call in
// it ends. The e2b load test found siblings coming back as exit -1 with no output.
func TestBrokenCallSparesItsSessionSiblings(t *testing.T) {
	e := newEnv(t, testPolicy("session"), nil)
	if _, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "true"}); err != nil {
		t.Fatal(err)
	}
	type rr struct {
		r   *executor.Result
		err error
	}
	sibling := make(chan rr, 1)
	go func() {
		r, err := e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "sleep 2; echo sibling done"})
		sibling <- rr{r, err}
	}()
	for e.fake.Stats().LiveProcs == 0 {
		time.Sleep(10 * time.Millisecond)
	}
	r, err := e.run("run_command", "A", 300*time.Millisecond, 1<<16, map[string]any{"command": "sleep 30"})
	if err == nil && (r == nil || !r.TimedOut) {
		t.Fatalf("the sleeping call must time out: %+v", r)
	}
	// The session's next call runs in a fresh sandbox while the sibling still runs in the old one.
	r, err = e.run("run_command", "A", 20*time.Second, 1<<16, map[string]any{"command": "echo next"})
	if err != nil || r.Stdout != "next\n" {
		t.Fatalf("the session's next call: %+v %v", r, err)
	}
	s := <-sibling
	if s.err != nil || s.r.ExitCode != 0 || s.r.Stdout != "sibling done\n" {
		t.Fatalf("a sibling call was killed by another call's timeout: %+v %v", s.r, s.err)
	}
	// Control: the retired sandbox is gone once its last call ended; only the fresh one is live.
	deadline := time.Now().Add(5 * time.Second)
	for e.fake.Count() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the retired sandbox outlived its last call: %d live %+v", e.fake.Count(), e.fake.Live())
		}
		time.Sleep(20 * time.Millisecond)
	}
	e.ex.Close()
	e.noLeaks()
}
