package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// Tests of #22 item 4: what a hostile or slow E2B (control plane, envd, interpreter) can make
// the client hold, show, or wait for.

// keyPieces fails if any 8 consecutive characters of the key appear in text: a key cut by a cap
// must not come back even in part.
func keyPieces(t *testing.T, where, text string) {
	t.Helper()
	for i := 0; i+8 <= len(testKey); i++ {
		if strings.Contains(text, testKey[i:i+8]) {
			at := strings.Index(text, testKey[i:i+8])
			t.Errorf("%s shows part of the key (%q at byte %d of %d)", where, testKey[i:i+8], at, len(text))
			return
		}
	}
}

// ndjson answers /execute with the given events, each generated as it is written (the fake
// holds none of them).
func ndjson(events func(emit func(v any) error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		w.WriteHeader(http.StatusOK)
		enc := json.NewEncoder(w)
		events(func(v any) error { return enc.Encode(v) })
		enc.Encode(map[string]any{"type": "end_of_execution"})
	}
}

// heapWatch samples the heap in use while f runs; past limit it calls abort (so a mutant that
// holds everything fails fast instead of taking the machine's memory). It returns the peak.
func heapWatch(limit uint64, abort func(), f func()) uint64 {
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			if ms.HeapInuse > limit {
				abort()
			}
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	f()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// heapBound is what serve's heap may reach while a hostile interpreter streams at it: a few
// events of up to maxLine (12 MiB) in flight, the caps, and the test's own fake.
const heapBound = 96 << 20

// TestHostileInterpreterResults: 600 results of 1 MiB each (a hostile interpreter, or code
// displaying a big value in a loop) are dropped as they arrive: the heap stays under heapBound
// (it reached 600+ MiB before), the result is marked truncated, and the next call works.
func TestHostileInterpreterResults(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	results := 600
	if raceBuild {
		results = 160
	}
	line := []byte(`{"type":"result","text":"` + strings.Repeat("r", 1<<20) + "\"}\n")
	e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		io.WriteString(w, `{"type":"stdout","text":"start\n"}`+"\n")
		for i := 0; i < results; i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		io.WriteString(w, `{"type":"end_of_execution"}`+"\n")
	}})
	runtime.GC()
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Second)
	defer cancel()
	var r *executor.Result
	var err error
	raw, _ := json.Marshal(map[string]any{"code": "1"})
	start := time.Now()
	peak := heapWatch(heapBound, cancel, func() {
		r, err = e.tool("run_code").Run(ctx, executor.Call{Args: raw, Timeout: 150 * time.Second, MaxOutput: 64 << 10, Session: "s"})
	})
	t.Logf("%d MiB of results read in %s; heap in use peaked at %d MiB (bound %d MiB)", results, time.Since(start).Round(time.Millisecond), peak>>20, heapBound>>20)
	if peak > heapBound {
		t.Fatalf("heap in use reached %d MiB: the results were held, not dropped as they arrived", peak>>20)
	}
	if err != nil {
		t.Fatal(err)
	}
	if r.TimedOut || !r.Truncated || len(r.Stdout) > 64<<10 || !strings.HasPrefix(r.Stdout, "start\nrrr") {
		t.Fatalf("want the results cut to the cap and marked truncated: truncated=%v len=%d", r.Truncated, len(r.Stdout))
	}
	// Many small results: the count is capped too.
	e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: ndjson(func(emit func(any) error) {
		for i := 0; i < 10000; i++ {
			emit(map[string]any{"type": "result", "text": "x"})
		}
	})})
	sb := e.sandbox(ctx)
	ex, err := e.ex.client.RunCode(ctx, sb, "1", "", io.Discard, io.Discard, 1<<20)
	e.ex.client.Kill(ctx, sb.ID)
	if err != nil || len(ex.Results) != MaxResults || !ex.Truncated {
		t.Fatalf("want %d results kept of 10000 and truncated: %d, %v, %v", MaxResults, len(ex.Results), ex.Truncated, err)
	}
	r, err = e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "6*7"})
	if err != nil || r.Stdout != "42\n" || r.Truncated {
		t.Fatalf("the next call must work: %+v %v", r, err)
	}
	e.noLeaks()
}

// sandbox creates a bare sandbox for a client-level test; it is killed at the test's end.
func (e *env) sandbox(ctx context.Context) *Sandbox {
	e.t.Helper()
	sb, err := e.ex.client.Create(ctx, CreateOptions{Template: "code-interpreter-v1", Timeout: time.Minute})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { e.ex.client.Kill(context.Background(), sb.ID) })
	return sb
}

// TestHostileInterpreterException: a 3 MB exception (name, value, traceback) comes back within
// limits.max_output_bytes, marked truncated, and the error text (which is also the audit's
// reason) stays bounded; the heap stays bounded; the next call works.
func TestHostileInterpreterException(t *testing.T) {
	e := newEnv(t, testPolicy("call"), nil)
	e.fake.SetFault(&e2bfake.Fault{Scope: "execute", Times: 1, Handler: ndjson(func(emit func(any) error) {
		emit(map[string]any{"type": "error", "name": strings.Repeat("N", 1<<20), "value": strings.Repeat("v", 1<<20), "traceback": strings.Repeat("t", 1<<20)})
	})})
	const maxOut = 4096
	_, err := e.run("run_code", "s", 20*time.Second, maxOut, map[string]any{"code": "1"})
	var ce *CodeError
	if !errors.As(err, &ce) {
		t.Fatalf("want a CodeError, got %v", err)
	}
	if n := len(ce.Name) + len(ce.Value) + len(ce.Traceback); n > maxOut || !ce.Truncated {
		t.Fatalf("the exception's fields hold %d bytes (limit %d), truncated=%v", n, maxOut, ce.Truncated)
	}
	if n := len(err.Error()); n > maxOut+200 {
		t.Fatalf("the error text (the audit's reason) is %d bytes", n)
	}
	r, err := e.run("run_code", "s", 20*time.Second, 1<<16, map[string]any{"code": "6*7"})
	if err != nil || r.Stdout != "42\n" {
		t.Fatalf("the next call must work: %+v %v", r, err)
	}
	e.noLeaks()
}

// TestKeyRedactedBeforeEveryCap: an upstream echoing the key in stdout, stderr, a result, an
// exception and error bodies (of statuses whose text is shown), placed so the key straddles
// each cap, never gets any 8 characters of it out.
func TestKeyRedactedBeforeEveryCap(t *testing.T) {
	const maxOut = 1000
	p := testPolicy("call")
	e := newEnv(t, p, nil)
	pad := func(n int) string { return strings.Repeat("A", n) }
	// The program prints the key (as a hostile sandbox image or envd could), straddling the cap,
	// and once split over two writes (two output events).
	half := len(testKey) / 2
	// (Text after the key makes the stream hit the cap whether the key is redacted or not.)
	cmd := fmt.Sprintf("printf '%%s' '%s%s%s'; printf '%%s' '%s%s%s' >&2", pad(maxOut-10), testKey, pad(50), pad(maxOut-20), testKey, pad(50))
	r, err := e.run("run_command", "s", 20*time.Second, maxOut, map[string]any{"command": cmd})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Truncated {
		t.Fatalf("negative control: the output must have hit the cap: %+v", r)
	}
	keyPieces(t, "run_command stdout", r.Stdout)
	keyPieces(t, "run_command stderr", r.Stderr)
	split := fmt.Sprintf("printf '%%s' '%s'; sleep 0.3; printf '%%s' '%s'", testKey[:half], testKey[half:])
	if r, err = e.run("run_command", "s", 20*time.Second, maxOut, map[string]any{"command": split}); err != nil {
		t.Fatal(err)
	}
	keyPieces(t, "run_command stdout (key split over two events)", r.Stdout)
	if !strings.Contains(r.Stdout, redacted) {
		t.Errorf("negative control: the split key must be replaced: %q", r.Stdout)
	}
	code := fmt.Sprintf("import sys, time\nk = %q\nsys.stdout.write(%q + k + %q)\nsys.stderr.write(k[:%d]); sys.stderr.flush(); time.sleep(0.3); sys.stderr.write(k[%d:])\n%q + k",
		testKey, pad(maxOut-12), pad(50), half, half, pad(maxOut-15))
	if r, err = e.run("run_code", "s", 20*time.Second, maxOut, map[string]any{"code": code}); err != nil {
		t.Fatal(err)
	}
	keyPieces(t, "run_code stdout", r.Stdout)
	keyPieces(t, "run_code stderr", r.Stderr)
	// The result alone straddles its cap.
	if r, err = e.run("run_code", "s", 20*time.Second, maxOut, map[string]any{"code": fmt.Sprintf("%q + %q + %q", pad(maxOut-15), testKey, pad(50))}); err != nil {
		t.Fatal(err)
	}
	if !r.Truncated {
		t.Errorf("negative control: the result must have hit the cap: %+v", r)
	}
	keyPieces(t, "run_code result", r.Stdout)
	_, err = e.run("run_code", "s", 20*time.Second, maxOut, map[string]any{"code": fmt.Sprintf("raise ValueError(%q + %q + %q)", pad(maxOut-20), testKey, pad(50))})
	var ce *CodeError
	if !errors.As(err, &ce) || !ce.Truncated {
		t.Fatalf("want a truncated CodeError, got %v", err)
	}
	keyPieces(t, "exception", err.Error())

	// Upstream error bodies: statuses whose text is shown, the key straddling the message cap
	// (JSON message) and the body read limit (plain text).
	for _, c := range []struct {
		scope string
		body  func(w http.ResponseWriter)
	}{
		{"api", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			json.NewEncoder(w).Encode(map[string]any{"code": 403, "message": pad(maxErrText-10) + testKey})
		}},
		{"api", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			json.NewEncoder(w).Encode(map[string]any{"code": 400, "message": testKey + " is " + pad(maxErrText)})
		}},
		{"api", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, pad(maxErrBody-10)+testKey)
		}},
		{"envd", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, "denied for "+testKey+pad(maxErrText))
		}},
		{"envd", func(w http.ResponseWriter) {
			// A Connect error trailer carrying the key.
			w.Header().Set("Content-Type", "application/connect+json")
			w.WriteHeader(http.StatusOK)
			b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": "internal", "message": pad(maxErrText-12) + testKey}})
			w.Write(append([]byte{2, 0, 0, byte(len(b) >> 8), byte(len(b))}, b...))
		}},
		{"execute", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, pad(maxErrText-5)+testKey)
		}},
	} {
		body := c.body
		e.fake.SetFault(&e2bfake.Fault{Scope: c.scope, Times: 1, Handler: func(w http.ResponseWriter, r *http.Request) { body(w) }})
		tool, args := "run_command", map[string]any{"command": "true"}
		if c.scope == "execute" {
			tool, args = "run_code", map[string]any{"code": "1"}
		}
		_, err := e.run(tool, "s", 20*time.Second, maxOut, args)
		if err == nil {
			t.Fatalf("%s: want an error", c.scope)
		}
		keyPieces(t, c.scope+" error", err.Error())
		if !strings.Contains(err.Error(), "AAAA") {
			t.Errorf("negative control: the upstream's text must be shown: %v", err)
		}
		e.fake.SetFault(nil)
	}
	e.ex.Close()
	keyPieces(t, "the log", e.logs.String())
	e.noLeaks()
}

// TestNoRedirectCarriesKey: a control plane (or a sandbox) answering 307 to another host does
// not get the key (or the sandbox's token) sent there: the redirect is reported, not followed.
func TestNoRedirectCarriesKey(t *testing.T) {
	var got sync.Map
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store("key", r.Header.Get("X-Api-Key"))
		got.Store("token", r.Header.Get("X-Access-Token"))
		http.Error(w, "elsewhere", http.StatusTeapot)
	}))
	defer other.Close()
	redirect := func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}
	e := newEnv(t, testPolicy("call"), nil)
	for _, scope := range []string{"api", "envd"} {
		e.fake.SetFault(&e2bfake.Fault{Scope: scope, Times: 1, Handler: redirect})
		_, err := e.run("run_command", "s", 10*time.Second, 1000, map[string]any{"command": "true"})
		e.fake.SetFault(nil)
		if k, _ := got.Load("key"); k != nil && k != "" {
			t.Fatalf("%s: the API key was sent to the redirect's host: %q", scope, k)
		}
		if k, _ := got.Load("token"); k != nil && k != "" {
			t.Fatalf("%s: the sandbox's access token was sent to the redirect's host: %q", scope, k)
		}
		if err == nil || !strings.Contains(err.Error(), "redirect") || !strings.Contains(err.Error(), other.URL) {
			t.Fatalf("%s: want an error naming the redirect, got %v", scope, err)
		}
		keyPieces(t, scope+" redirect error", err.Error())
	}
	e.noLeaks()
}

// TestCallTimeoutBoundsControlPlane: a control plane that hangs on create makes the call return
// by its own timeout (not the request timeout's 30 s), saying what was slow.
func TestCallTimeoutBoundsControlPlane(t *testing.T) {
	f := newFake(t)
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}
	ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return vars[k] }, NoReap: true, NoUndertaker: true,
		RequestTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	f.SetFault(&e2bfake.Fault{Scope: "api", Hang: true, Times: 1})
	const timeout = 1500 * time.Millisecond
	raw, _ := json.Marshal(map[string]any{"command": "true"})
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	start := time.Now()
	done := make(chan error, 1)
	go func() {
		_, err := ex.Tools()[1].Run(ctx, executor.Call{Args: raw, Timeout: timeout, MaxOutput: 100, Session: "s"})
		done <- err
	}()
	select {
	case err = <-done:
	case <-time.After(timeout + 5*time.Second):
		t.Fatalf("the call still runs %s after its %s timeout: the control plane's hang is not bounded by the call", 5*time.Second, timeout)
	}
	took := time.Since(start)
	if took > timeout+time.Second {
		t.Fatalf("the call took %s, timeout %s", took, timeout)
	}
	if err == nil || !strings.Contains(err.Error(), "did not answer creating the sandbox within") {
		t.Fatalf("want an error saying the create was slow, got %v", err)
	}
	t.Logf("returned after %s: %v", took.Round(time.Millisecond), err)
}

// TestCallLeash: a reuse = call sandbox lives at E2B a leash at a time, extended while its call
// runs: the call outlasts several leashes, and E2B's end for it is never further than a leash.
func TestCallLeash(t *testing.T) {
	f := newFake(t)
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}
	const leash = 2 * time.Second // whole seconds: E2B's timeouts are
	ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return vars[k] }, NoReap: true, NoUndertaker: true, Leash: leash})
	if err != nil {
		t.Fatal(err)
	}
	defer ex.Close()
	raw, _ := json.Marshal(map[string]any{"command": "sleep 5; echo done"})
	done := make(chan struct{})
	var far time.Duration
	go func() {
		defer close(done)
		for {
			select {
			case <-done:
				return
			case <-time.After(50 * time.Millisecond):
			}
			for _, s := range f.Live() {
				far = max(far, time.Until(s.EndAt))
			}
		}
	}()
	r, err := ex.Tools()[1].Run(context.Background(), executor.Call{Args: raw, Timeout: 20 * time.Second, MaxOutput: 100, Session: "s"})
	done <- struct{}{}
	if err != nil || r.Stdout != "done\n" {
		t.Fatalf("the keepalive must hold the call's sandbox past its leash: %+v %v", r, err)
	}
	if far > leash+100*time.Millisecond || f.Requests("timeout") < 2 {
		t.Fatalf("the sandbox's end at E2B was up to %s away (leash %s), %d extensions", far, leash, f.Requests("timeout"))
	}
}

// TestUndertakerKillsWhenServeDies: a serve SIGKILLed mid-call leaves no sandbox running: its
// undertaker kills it within seconds (the leash, 30 s, would be the only backstop without it).
// The "serve" is this test binary re-run as a child (TestUndertakerChild).
func TestUndertakerKillsWhenServeDies(t *testing.T) {
	f := newFake(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestUndertakerChild$", "-test.v")
	cmd.Env = append(os.Environ(), "E2B_TEST_CHILD_URL="+f.URL())
	out := &syncBuf{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	deadline := time.Now().Add(20 * time.Second)
	for f.Stats().LiveProcs == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the child never started its call:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill()
	cmd.Wait()
	killed := time.Now()
	for f.Count() != 0 || f.Stats().LiveProcs != 0 {
		if time.Since(killed) > 3*time.Second {
			t.Fatalf("the sandbox of a SIGKILLed serve still runs 3s later: %+v\nchild said:\n%s", f.Live(), out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("the sandbox died %s after serve was killed", time.Since(killed).Round(time.Millisecond))
}

// TestUndertakerChild is the serve TestUndertakerKillsWhenServeDies kills: it runs a long call.
func TestUndertakerChild(t *testing.T) {
	url := os.Getenv("E2B_TEST_CHILD_URL")
	if url == "" {
		t.Skip("run by TestUndertakerKillsWhenServeDies")
	}
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": url, "E2B_SANDBOX_URL": url}
	ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return vars[k] }, NoReap: true,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, nil))})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"command": "sleep 60"})
	ex.Tools()[1].Run(context.Background(), executor.Call{Args: raw, Timeout: 60 * time.Second, MaxOutput: 100, Session: "s"})
}
