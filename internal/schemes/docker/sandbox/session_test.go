package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func sessionPolicy(mut ...func(*policy.Policy)) *policy.Policy {
	return testPolicy(append([]func(*policy.Policy){func(p *policy.Policy) { dksec.Of(p).Reuse = "session" }}, mut...)...)
}

// callIn runs one call in session sid the way serve does.
func callIn(t testing.TB, e *Executor, sid, name string, args map[string]any) (*executor.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), e.pol.Limits.Timeout.Duration)
	defer cancel()
	return tool(e, name).Run(ctx, executor.Call{Args: raw, Timeout: e.pol.Limits.Timeout.Duration, MaxOutput: int(e.pol.Limits.MaxOutputBytes), Session: sid})
}

func mustIn(t testing.TB, e *Executor, sid, name string, args map[string]any) *executor.Result {
	t.Helper()
	res, err := callIn(t, e, sid, name, args)
	if err != nil {
		t.Fatalf("session %s: %s %v: %v", sid, name, args, err)
	}
	return res
}

func py(code string) map[string]any   { return map[string]any{"code": code} }
func sh(script string) map[string]any { return map[string]any{"script": script} }

// sessionContainers lists the engine's containers of this executor (running or not).
func ownContainers(t testing.TB, eng *engine.Client, e *Executor) []string {
	t.Helper()
	return containers(t, eng, LabelInstance+"="+e.me.ID())
}

// waitGone waits until the executor's containers number want, or fails.
func waitContainers(t testing.TB, eng *engine.Client, e *Executor, want int, within time.Duration) {
	t.Helper()
	var got []string
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if got = ownContainers(t, eng, e); len(got) == want {
			return
		}
	}
	t.Fatalf("%d containers of this serve, want %d", len(got), want)
}

// State lives across the calls of one session: a variable, a file in /tmp, a process; another
// session sees none of them; the interpreter survives a crash in the same container (its files
// kept) and reset starts a fresh one.
func TestDockerSessionState(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	if r := mustIn(t, e, "A", ToolPython, py("x = 41")); r.ExitCode != 0 {
		t.Fatalf("%+v", r)
	}
	if r := mustIn(t, e, "A", ToolPython, py("print(x + 1)")); r.Stdout != "42\n" || r.ExitCode != 0 {
		t.Fatalf("x = 41 then print(x + 1): %+v", r)
	}
	mustIn(t, e, "A", ToolShell, sh("echo secret-a > /tmp/a.txt; (sleep 300 &) ; echo started"))
	if r := mustIn(t, e, "A", ToolPython, py("print(open('/tmp/a.txt').read().strip())")); r.Stdout != "secret-a\n" {
		t.Fatalf("a file from the session's shell call: %+v", r)
	}
	// A second session, in series: no x, no file, no sleep. (Fatal at the first: what follows
	// assumes the sessions apart, and a shared container makes it slow to fail.)
	r := mustIn(t, e, "B", ToolPython, py("print('x' in globals())"))
	if r.Stdout != "False\n" {
		t.Fatalf("session B sees A's x: %+v", r)
	}
	r = mustIn(t, e, "B", ToolShell, sh("cat /tmp/a.txt 2>&1"))
	if strings.Contains(r.Stdout, "secret-a") {
		t.Fatalf("session B reads A's /tmp file: %+v", r)
	}
	countSleep := "import os\nn = 0\nfor p in os.listdir('/proc'):\n    try:\n        n += open('/proc/%s/cmdline' % p, 'rb').read() == b'sleep\\x00300\\x00'\n    except Exception:\n        pass\nprint(n)"
	if r := mustIn(t, e, "A", ToolPython, py(countSleep)); r.Stdout != "1\n" {
		t.Fatalf("session A does not see its own sleep 300: %+v", r)
	}
	r = mustIn(t, e, "B", ToolPython, py(countSleep))
	if r.Stdout != "0\n" {
		t.Fatalf("session B sees A's processes: %+v", r)
	}
	if n := e.SessionContainers(); n != 2 {
		t.Errorf("%d session containers, want 2", n)
	}
	// An interpreter crash: said so, restarted, files kept, variables gone.
	r = mustIn(t, e, "A", ToolPython, py("import os\nprint('bye', flush=True)\nos._exit(3)"))
	if r.ExitCode != 3 || !strings.Contains(r.Stderr, "interpreter ended with status 3") || r.Stdout != "bye\n" {
		t.Errorf("os._exit(3): %+v", r)
	}
	// A crash while a process the interpreter started holds its status pipe: still seen at once.
	r = mustIn(t, e, "A", ToolPython, py("import os\nos.system('sleep 30 &')\nos._exit(5)"))
	if r.ExitCode != 5 || !strings.Contains(r.Stderr, "interpreter ended with status 5") || r.DurationMS > 10000 {
		t.Errorf("os._exit(5) beside a background process: %+v", r)
	}
	r = mustIn(t, e, "A", ToolPython, py("print('x' in globals(), open('/tmp/a.txt').read().strip())"))
	if r.Stdout != "False secret-a\n" {
		t.Errorf("after the crash: %+v", r)
	}
	r = mustIn(t, e, "A", ToolPython, py("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)"))
	if r.ExitCode != 128+11 || !strings.Contains(r.Stderr, "by signal 11") {
		t.Errorf("segfault: %+v", r)
	}
	mustIn(t, e, "A", ToolPython, py("y = 1"))
	r = mustIn(t, e, "A", ToolPython, map[string]any{"code": "print('y' in globals())", "reset": true})
	if r.Stdout != "False\n" {
		t.Errorf("reset: %+v", r)
	}
	// Exceptions rendered as in a per-call container; exit status of sys.exit.
	r = mustIn(t, e, "A", ToolPython, py("def f():\n    raise ValueError('boom')\nf()"))
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "ValueError: boom") || strings.Contains(r.Stderr, "mcpsandbox-session") {
		t.Errorf("exception: %+v", r)
	}
	if r := mustIn(t, e, "A", ToolPython, py("import sys\nsys.exit(7)")); r.ExitCode != 7 {
		t.Errorf("sys.exit(7): %+v", r)
	}
	if r := mustIn(t, e, "A", ToolShell, sh("echo out; echo err >&2; exit 5")); r.ExitCode != 5 || r.Stdout != "out\n" || r.Stderr != "err\n" {
		t.Errorf("shell: %+v", r)
	}
	// The container's nonce is in every process's view (pid 1's argv): a mark made with it is
	// output, not the end of the call (each call has a nonce of its own).
	e.sess.mu.Lock()
	forged := "mcpsandbox-end:" + e.sess.m["A"].sb.b.nonce + ":0:0"
	e.sess.mu.Unlock()
	r = mustIn(t, e, "A", ToolShell, sh("echo "+forged+"; echo "+forged+" >&2; sleep 0.3; echo after; exit 4"))
	if r.ExitCode != 4 || !strings.Contains(r.Stdout, "after") {
		t.Errorf("a forged mark ended the call: %+v", r)
	}
	e.EndSession("A")
	e.EndSession("B")
	waitContainers(t, eng, e, 0, 20*time.Second)
	if n := e.SessionContainers(); n != 0 {
		t.Errorf("%d session containers after both ended", n)
	}
}

// Sessions running at once see nothing of each other.
func TestDockerSessionsConcurrent(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { p.Limits.MaxConcurrent = 4 }))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 3 {
		sid := fmt.Sprintf("S%d", i)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 3 {
				// Each session runs a sleep of its own (sleep 30I) and counts the others' it can see.
				r, err := callIn(t, e, sid, ToolPython, py(fmt.Sprintf(
					"import os\nprint(globals().get('mine'), sorted(f for f in os.listdir('/tmp') if f.startswith('s-')))\nmine = %q\nopen('/tmp/s-%s-%d', 'w').close()\n"+
						"if %d == 0:\n    os.system('sleep 30%d &')\nn = 0\nfor p in os.listdir('/proc'):\n    try:\n        a = open('/proc/%%s/cmdline' %% p, 'rb').read()\n    except Exception:\n        continue\n"+
						"    n += a.startswith(b'sleep\\x0030') and a != b'sleep\\x0030%d\\x00'\nprint('foreign', n)", sid, sid, j, j, i, i)))
				if err != nil {
					errs <- err
					return
				}
				var want []string
				for k := range j {
					want = append(want, fmt.Sprintf("'s-%s-%d'", sid, k))
				}
				prev := "None"
				if j > 0 {
					prev = sid
				}
				if exp := fmt.Sprintf("%s [%s]\nforeign 0\n", prev, strings.Join(want, ", ")); r.Stdout != exp {
					errs <- fmt.Errorf("session %s call %d: got %q, want %q (%s)", sid, j, r.Stdout, exp, r.Stderr)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// docker.max_sessions holds: a session past it is refused naming the key; once one ends, a new
// one starts.
func TestDockerSessionCap(t *testing.T) {
	eng := needEngine(t)
	defer func(d time.Duration) { sessionKeep = d }(sessionKeep)
	sessionKeep = 0 // the keep after a call is TestDockerSessionKeptAfterCall's
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).MaxSessions = 2 }))
	mustIn(t, e, "A", ToolPython, py("x = 1"))
	mustIn(t, e, "B", ToolPython, py("x = 2"))
	// Past the cap with A and B idle: the least recently used one (A) gives way, as an HTTP
	// session does past limits.max_sessions; abandoned sessions held every place until
	// docker.session_idle (atk34 F1).
	if r := mustIn(t, e, "C", ToolShell, sh("echo ran")); r.Stdout != "ran\n" {
		t.Fatalf("a third session under max_sessions = 2, A and B idle: %+v", r)
	}
	if n := len(ownContainers(t, eng, e)); n > 2 {
		t.Errorf("%d containers, want at most 2", n)
	}
	if r := mustIn(t, e, "B", ToolPython, py("print(x)")); r.Stdout != "2\n" {
		t.Errorf("B, used after A, kept its container: %+v", r)
	}
	r := mustIn(t, e, "A", ToolPython, py("print('x' in globals())"))
	if r.Stdout != "False\n" || !strings.Contains(r.Stderr, "to make room for another session's (docker.max_sessions = 2)") {
		t.Errorf("A after its container gave way: %+v", r)
	}
	// Every session with a container running a call: a new one is refused, naming the key.
	var wg sync.WaitGroup
	for _, sid := range []string{"A", "B"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := callIn(t, e, sid, ToolShell, sh("sleep 4")); err != nil {
				t.Errorf("session %s: %v", sid, err)
			}
		}()
	}
	time.Sleep(1500 * time.Millisecond)
	_, err := callIn(t, e, "D", ToolShell, sh("echo ran"))
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != "docker.max_sessions" || !strings.Contains(ref.Reason, "each running a call") {
		t.Errorf("a new session while both places run calls: %v", err)
	}
	wg.Wait()
	if n := len(ownContainers(t, eng, e)); n > 2 {
		t.Errorf("%d containers, want at most 2", n)
	}
}

// A session's container is kept sessionKeep after its last call before another session may take
// its place: a newcomer past docker.max_sessions while the idle sessions' calls ended too recently
// is refused at once, naming the key and when to try again, and the sessions keep their state; a
// newcomer for whom the least recently used one passes sessionKeep within placeWait waits for it
// and takes its place then, never earlier (trial40 F5: a client between two back-to-back calls lost
// its variables to a fifth client). Red with mutant docker-session-evict-min-idle.
func TestDockerSessionKeptAfterCall(t *testing.T) {
	eng := needEngine(t)
	defer func(k, w, g time.Duration) { sessionKeep, placeWait, claimGrace = k, w, g }(sessionKeep, placeWait, claimGrace)
	// claimGrace: C's claim, which C does not take up, withholds A's place that long (TestDockerSessionClaimQueue)
	sessionKeep, placeWait, claimGrace = 6*time.Second, 3*time.Second, time.Second
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).MaxSessions = 2 }))
	mustIn(t, e, "A", ToolPython, py("x = 1"))
	mustIn(t, e, "B", ToolPython, py("x = 2"))
	start := time.Now()
	_, err := callIn(t, e, "C", ToolShell, sh("echo ran"))
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != "docker.max_sessions" || !strings.Contains(ref.Reason, "kept 6s after its last call") || !strings.Contains(ref.Reason, "try again in ") {
		t.Fatalf("a new session past max_sessions = 2 with both others' calls just ended: %v, want refused naming docker.max_sessions and when to try again", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("refused after %s, want at once (its wait could not reach the keep within placeWait)", d)
	}
	aUsed := time.Now()
	if r := mustIn(t, e, "A", ToolPython, py("print(x)")); r.Stdout != "1\n" || r.Stderr != "" {
		t.Errorf("A after the refused newcomer: %+v", r)
	}
	if r := mustIn(t, e, "B", ToolPython, py("print(x)")); r.Stdout != "2\n" || r.Stderr != "" {
		t.Errorf("B after the refused newcomer: %+v", r)
	}
	time.Sleep(4 * time.Second) // A, the least recently used, passes the keep within placeWait
	// D, not C: C's refusal was its claim, which A's later call does not push back
	// (TestDockerSessionKeepClaim); a newcomer without one waits for A's keep.
	if r := mustIn(t, e, "D", ToolShell, sh("echo ran")); r.Stdout != "ran\n" {
		t.Fatalf("a new session once A's keep passes within placeWait: %+v", r)
	}
	if d := time.Since(aUsed); d < sessionKeep {
		t.Errorf("the newcomer was served %s after A's last call, within the keep (%s)", d, sessionKeep)
	}
	if r := mustIn(t, e, "B", ToolPython, py("print(x)")); r.Stdout != "2\n" {
		t.Errorf("B, used after A, kept its container: %+v", r)
	}
	if n := len(ownContainers(t, eng, e)); n > 2 {
		t.Errorf("%d containers, want at most 2", n)
	}
}

// What a newcomer past docker.max_sessions is told holds: "try again in Ns" is its claim, and
// the idle session's later calls do not push it back; when it comes back then it is served, the
// holder's container giving way (atk41 F7: one client held every place for ever with a trivial
// call per session every 25 s, and each newcomer was refused again). A session that got its
// place after another newcomer's claim keeps it sessionKeep from then: the second newcomer is
// refused at once and the first keeps its state, then the second is served at its new time.
// Red with mutants docker-session-keep-fair and docker-session-claim-turns.
func TestDockerSessionKeepClaim(t *testing.T) {
	eng := needEngine(t)
	defer func(k, w time.Duration) { sessionKeep, placeWait = k, w }(sessionKeep, placeWait)
	sessionKeep, placeWait = 6*time.Second, 3*time.Second
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).MaxSessions = 1 }))
	tryAgain := func(who string) time.Time {
		t.Helper()
		start := time.Now()
		_, err := callIn(t, e, who, ToolShell, sh("echo ran"))
		var ref *executor.Refusal
		if !errors.As(err, &ref) || ref.Rule != "docker.max_sessions" {
			t.Fatalf("%s past max_sessions = 1, the other used just now: %v, want refused naming docker.max_sessions", who, err)
		}
		var n int
		if i := strings.Index(ref.Reason, "try again in "); i < 0 {
			t.Fatalf("%s's refusal says no time: %s", who, ref.Reason)
		} else if _, err := fmt.Sscanf(ref.Reason[i:], "try again in %ds", &n); err != nil {
			t.Fatalf("%s's refusal: %q: %v", who, ref.Reason[i:], err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s refused after %s, want at once", who, d)
		}
		return start.Add(time.Duration(n) * time.Second)
	}
	mustIn(t, e, "H", ToolPython, py("x = 1"))
	at1 := tryAgain("N1")
	tryAgain("N2")
	// The holder keeps its place alive with a call a second until N1's time.
	for time.Now().Before(at1) {
		if r := mustIn(t, e, "H", ToolPython, py("print(x)")); r.Stdout != "1\n" {
			t.Fatalf("H while the newcomers wait: %+v", r)
		}
		time.Sleep(time.Second)
	}
	start := time.Now()
	if r, err := callIn(t, e, "N1", ToolPython, py("n = 1")); err != nil || r.Stderr != "" {
		t.Fatalf("N1 at the time it was told, H having called every second meanwhile: %+v %v", r, err)
	}
	if d := time.Since(start); d > 2*time.Second+placeWait {
		t.Errorf("N1 served %s after it came back at its time", d)
	}
	// N2's claim has passed too, but N1 got its place after it: N1 keeps it sessionKeep.
	at2 := tryAgain("N2")
	if r := mustIn(t, e, "N1", ToolPython, py("print(n)")); r.Stdout != "1\n" || r.Stderr != "" {
		t.Errorf("N1 after N2's try: %+v", r)
	}
	time.Sleep(time.Until(at2))
	if r := mustIn(t, e, "N2", ToolShell, sh("echo ran")); r.Stdout != "ran\n" {
		t.Errorf("N2 at its new time: %+v", r)
	}
	if n := len(ownContainers(t, eng, e)); n > 1 {
		t.Errorf("%d containers, want at most 1", n)
	}
}

// The place a refused newcomer is told to come back for is its own: another session told the
// same time later (the same client's second session, calling a second early) waits, and the
// newcomer coming back after its time is served (atk42 F6: the early call took the place every
// round, and the newcomer was refused round after round). Red with mutant
// docker-session-claim-queue.
func TestDockerSessionClaimTurn(t *testing.T) {
	eng := needEngine(t)
	defer func(k, w, g time.Duration) { sessionKeep, placeWait, claimGrace = k, w, g }(sessionKeep, placeWait, claimGrace)
	sessionKeep, placeWait, claimGrace = 6*time.Second, 3*time.Second, 2*time.Second
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).MaxSessions = 1 }))
	mustIn(t, e, "H", ToolPython, py("x = 1"))
	refusedUntil := func(who string) time.Time {
		t.Helper()
		start := time.Now()
		_, err := callIn(t, e, who, ToolShell, sh("echo ran"))
		var ref *executor.Refusal
		var n int
		if !errors.As(err, &ref) || ref.Rule != "docker.max_sessions" {
			t.Fatalf("%s past max_sessions = 1, H used just now: %v, want refused", who, err)
		} else if i := strings.Index(ref.Reason, "try again in "); i < 0 {
			t.Fatalf("%s's refusal says no time: %s", who, ref.Reason)
		} else if _, err := fmt.Sscanf(ref.Reason[i:], "try again in %ds", &n); err != nil {
			t.Fatalf("%s's refusal: %q: %v", who, ref.Reason[i:], err)
		}
		return start.Add(time.Duration(n) * time.Second)
	}
	atV := refusedUntil("V")
	atA := refusedUntil("A0")
	time.Sleep(time.Until(atA.Add(-time.Second)))
	early := make(chan error, 1)
	go func() { // A0 a second before its time: its call waits for the place
		_, err := callIn(t, e, "A0", ToolShell, sh("echo ran"))
		early <- err
	}()
	time.Sleep(time.Until(atV.Add(1300 * time.Millisecond))) // V comes 0.3 s after a told time rounded up
	if r, err := callIn(t, e, "V", ToolPython, py("v = 1")); err != nil || r.Stderr != "" {
		t.Errorf("V back after its time, A0 having called a second before it: %+v %v, want served", r, err)
	}
	if err := <-early; err == nil {
		t.Errorf("A0, claiming after V, was served at V's turn")
	}
	if r, err := callIn(t, e, "V", ToolPython, py("print(v)")); err != nil || r.Stdout != "1\n" {
		t.Errorf("V after A0's try: %+v %v, want its place kept", r, err)
	}
	if n := len(ownContainers(t, eng, e)); n > 1 {
		t.Errorf("%d containers, want at most 1", n)
	}
}

// A session container is counted under docker.max_sessions until the engine has removed it,
// not from when its removal starts: a new session's start waits for the place (bounded), so the
// engine never holds more than the cap (attack round atk34b, N1). The engine's removals are
// held back here by taking every place of the executor's removal semaphore. Red with mutant
// docker-session-removal-uncounted.
func TestDockerSessionCapCountsRemovals(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) {
		dksec.Of(p).MaxSessions = 1
		dksec.Of(p).Pool = 0
	}))
	holdRemovals := func() (release func()) {
		for range cap(e.removeSem) {
			e.removeSem <- struct{}{}
		}
		var once sync.Once
		release = func() {
			once.Do(func() {
				for range cap(e.removeSem) {
					<-e.removeSem
				}
			})
		}
		t.Cleanup(release) // before Close, which removes through the semaphore
		return release
	}
	mustIn(t, e, "A", ToolShell, sh("echo a"))
	release := holdRemovals()
	e.EndSession("A") // its removal starts and waits
	type result struct {
		r   *executor.Result
		err error
	}
	done := make(chan result, 1)
	go func() {
		r, err := callIn(t, e, "B", ToolShell, sh("echo ran"))
		done <- result{r, err}
	}()
	time.Sleep(2 * time.Second)
	if n := len(ownContainers(t, eng, e)); n > 1 {
		t.Errorf("%d containers while the ended session's is being removed, max_sessions = 1: the new session did not wait for its place", n)
	}
	select {
	case res := <-done:
		t.Errorf("the new session's call ended while the old container was still there: %+v %v", res.r, res.err)
	default:
	}
	release()
	select {
	case res := <-done:
		if res.err != nil || res.r.Stdout != "ran\n" {
			t.Errorf("the new session's call once the old container was gone: %+v %v", res.r, res.err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the new session's call still waits 30 s after the old container's removal was let go")
	}
	// The wait is bounded: an engine that does not remove the old container gets the call refused.
	defer func(d time.Duration) { placeWait = d }(placeWait)
	placeWait = time.Second
	release = holdRemovals()
	e.EndSession("B")
	start := time.Now()
	_, err := callIn(t, e, "C", ToolShell, sh("echo ran"))
	var ref *executor.Refusal
	if !errors.As(err, &ref) || ref.Rule != "docker.max_sessions" || !strings.Contains(ref.Reason, "still being removed") {
		t.Errorf("a new session while the engine does not remove the old container: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refused after %s, want about placeWait = 1s", d)
	}
	release()
	waitContainers(t, eng, e, 0, 20*time.Second)
}

// A session idle for docker.session_idle loses its container; its next call says so and runs
// in a fresh one.
func TestDockerSessionIdle(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).SessionIdle = policy.Duration{Duration: time.Second} }))
	mustIn(t, e, "A", ToolPython, py("x = 41"))
	waitContainers(t, eng, e, 1, 5*time.Second)
	waitContainers(t, eng, e, 0, 20*time.Second)
	r := mustIn(t, e, "A", ToolPython, py("print('x' in globals())"))
	if r.Stdout != "False\n" || !strings.Contains(r.Stderr, "docker.session_idle = 1s") {
		t.Errorf("after idle expiry: %+v", r)
	}
}

// A call that overruns its timeout has the session's container removed; the session's next call
// runs in a fresh one and says what happened.
func TestDockerSessionTimeout(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	mustIn(t, e, "A", ToolPython, py("x = 41"))
	first := ownContainers(t, eng, e)
	r := mustIn(t, e, "A", ToolShell, map[string]any{"script": "sleep 600 & sleep 600", "timeout": 1})
	if !r.TimedOut || r.ExitCode != 137 || !strings.Contains(r.Stderr, "timed out after 1s") {
		t.Fatalf("overrun: %+v", r)
	}
	r = mustIn(t, e, "A", ToolPython, py("print('x' in globals())"))
	if r.Stdout != "False\n" || !strings.Contains(r.Stderr, "previous call timed out after 1s") {
		t.Errorf("the call after the overrun: %+v", r)
	}
	for _, id := range first {
		if present(eng, id) {
			// removal is off the call's path: give it a moment
			time.Sleep(3 * time.Second)
			if present(eng, id) {
				t.Errorf("the overrun call's container %.12s is still there", id)
			}
		}
	}
	if n := e.SessionContainers(); n != 1 {
		t.Errorf("%d session containers, want 1", n)
	}
}

func present(eng *engine.Client, id string) bool {
	_, err := eng.API.ContainerInspect(context.Background(), id)
	return err == nil
}

// A session's container comes from the pool when one is ready, and the pool refills.
func TestDockerSessionFromPool(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy(func(p *policy.Policy) { dksec.Of(p).Pool = 1 }))
	poolFull := func() bool { return len(e.pool.ready) == 1 }
	waitUntil(t, 60*time.Second, "the pool to fill", poolFull)
	if r := mustIn(t, e, "A", ToolPython, py("x = 41")); r.ExitCode != 0 {
		t.Fatalf("%+v", r)
	}
	e.sess.mu.Lock()
	pooled := e.sess.m["A"].sb.b.pooled
	e.sess.mu.Unlock()
	if !pooled {
		t.Error("the session's container was started cold though the pool held one")
	}
	waitUntil(t, 60*time.Second, "the pool to refill", poolFull)
	if r := mustIn(t, e, "A", ToolPython, py("print(x + 1)")); r.Stdout != "42\n" {
		t.Errorf("%+v", r)
	}
}

func waitUntil(t testing.TB, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
	}
}

// The session's interpreter never imports from its working directory for itself: a
// traceback.py an earlier call of the session left in /tmp cannot replace its error report
// or its end of call.
func TestDockerSessionReplIsolated(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	mustIn(t, e, "A", ToolShell, sh("printf 'import os\\nos.write(2, b\"HIJACKED\\\\n\")\\nos._exit(0)\\n' > /tmp/traceback.py"))
	r := mustIn(t, e, "A", ToolPython, py("raise ValueError('boom')"))
	if r.ExitCode != 1 || !strings.Contains(r.Stderr, "ValueError: boom") || strings.Contains(r.Stderr, "HIJACKED") {
		t.Errorf("a traceback.py in /tmp took the session interpreter's error report: %+v", r)
	}
	// The program itself still finds modules where python3 -c would (its working directory).
	mustIn(t, e, "A", ToolShell, sh("echo 'V = 7' > /tmp/mymod.py"))
	if r := mustIn(t, e, "A", ToolPython, py("import mymod\nprint(mymod.V)")); r.Stdout != "7\n" {
		t.Errorf("import mymod from the working directory: %+v", r)
	}
}

// A session whose container stopped between calls (here a process it left running killed
// every process, the supervisor too) gets a fresh one at its next call, told so.
func TestDockerSessionContainerStopped(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	mustIn(t, e, "A", ToolPython, py("x = 41"))
	mustIn(t, e, "A", ToolShell, sh("(sleep 0.5; kill -9 -1) >/dev/null 2>&1 &"))
	time.Sleep(3 * time.Second)
	r := mustIn(t, e, "A", ToolPython, py("print('x' in globals())"))
	if r.Stdout != "False\n" || r.ExitCode != 0 || !strings.Contains(r.Stderr, "container stopped after its previous call") {
		t.Errorf("after the container stopped: %+v", r)
	}
	if r := mustIn(t, e, "A", ToolPython, py("x = 1\nprint(x)")); r.Stdout != "1\n" || r.Stderr != "" {
		t.Errorf("the fresh container: %+v", r)
	}
	if n := e.SessionContainers(); n != 1 {
		t.Errorf("%d session containers, want 1", n)
	}
}

// A session that ends while its call runs: the container goes at once, the call returns
// saying so, and a session's call that comes after its end does not bring the container back
// for the ended session's state.
func TestDockerSessionEndsDuringCall(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, sessionPolicy())
	mustIn(t, e, "A", ToolPython, py("x = 41"))
	done := make(chan *executor.Result, 1)
	go func() {
		r, err := callIn(t, e, "A", ToolShell, sh("sleep 600"))
		if err != nil {
			t.Errorf("the running call: %v", err)
		}
		done <- r
	}()
	time.Sleep(time.Second)
	start := time.Now()
	e.EndSession("A")
	select {
	case r := <-done:
		if r != nil && (r.ExitCode == 0 || !strings.Contains(r.Stderr, "removed during the call")) {
			t.Errorf("the call whose session ended: %+v", r)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the call whose session ended still runs 15s later")
	}
	t.Logf("the call returned %s after the session ended", time.Since(start).Round(time.Millisecond))
	waitContainers(t, eng, e, 0, 20*time.Second)
	if n := e.SessionContainers(); n != 0 {
		t.Errorf("%d session containers", n)
	}
}

// The executor itself refuses a session policy with a writable workspace, whatever built it.
func TestDockerSessionRefusesWritableWorkspace(t *testing.T) {
	p := sessionPolicy(func(p *policy.Policy) { dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = t.TempDir(), true })
	if _, err := New(p, Options{}); err == nil || !strings.Contains(err.Error(), "docker.workspace_writable") {
		t.Fatalf("New: %v", err)
	}
}

// A container started for a session that failed to start (create, attach, start, its ready
// line) or whose start the call gave up is removed off the call's path: it is held under
// docker.max_sessions until the engine removed it, as a session's own; a pooled one, or one of
// reuse = "call", is not a session's.
func TestDockerFailedSessionStartHeldUntilGone(t *testing.T) {
	for _, c := range []struct {
		p      *policy.Policy
		pooled bool
		want   int
	}{{sessionPolicy(), false, 1}, {sessionPolicy(), true, 0}, {testPolicy(), false, 0}} {
		e := &Executor{pol: c.p}
		b := &box{pooled: c.pooled, gone: make(chan struct{})}
		e.holdStarting(b)
		e.sess.mu.Lock()
		n := e.sess.held()
		e.sess.mu.Unlock()
		if n != c.want {
			t.Errorf("reuse %q, pooled %v: %d places held while its removal runs, want %d", dksec.Of(c.p).Reuse, c.pooled, n, c.want)
		}
		close(b.gone)
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			e.sess.mu.Lock()
			n = e.sess.held()
			e.sess.mu.Unlock()
			if n == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d places still held after the container was gone", n)
			}
		}
	}
}
