package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// fakeWithLimit is a local E2B that, as E2B does, answers a create past max sandboxes at once
// with 429.
func fakeWithLimit(t *testing.T, max int) *e2bfake.Server {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server (internal/harness/e2bfake) runs on Linux only")
	}
	f, err := e2bfake.New(e2bfake.Options{APIKey: testKey, MaxSandboxes: max})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func (e *env) echo(session, text string) (*executor.Result, error) {
	e.t.Helper()
	return e.run("run_command", session, 20*time.Second, 1<<16, map[string]any{"command": "echo " + text})
}

// A hostile peer (atk35 F6): one client opens sessions, makes one call in each and never ends
// them (an HTTP client that quits without a DELETE). Under e2b.max_sessions (default 8, below
// E2B Hobby's 20) the least recently used idle session's sandbox gives way: another session's
// call succeeds, serve never holds more than the cap, and the session that lost its sandbox is
// told why on its next call. Only when every session with a sandbox runs a call is a new one
// refused, naming the key.
func TestE2BSessionCap(t *testing.T) {
	f := fakeWithLimit(t, 20) // E2B Hobby
	e := envOn(t, f, testPolicy("session"), nil)
	cap := e2bsec.DefaultMaxSessions
	for i := 0; i < 20; i++ {
		if _, err := e.echo(fmt.Sprintf("abandoned-%d", i), "hi"); err != nil {
			t.Fatalf("abandoned session %d: %v", i, err)
		}
		if n := f.Count(); n > cap {
			t.Fatalf("after %d sessions serve holds %d sandboxes, over e2b.max_sessions = %d", i+1, n, cap)
		}
	}
	r, err := e.echo("victim", "served")
	if err != nil || r.Stdout != "served\n" {
		t.Fatalf("another session's call after 20 abandoned ones: %+v %v", r, err)
	}
	if st := f.Stats(); st.Peak > cap || st.Refused != 0 {
		t.Fatalf("E2B saw %d sandboxes at once (%d creates refused): the cap is %d", st.Peak, st.Refused, cap)
	}
	// abandoned-12 was the least recently used when the victim came: its next call is told.
	r, err = e.echo("abandoned-12", "back")
	if err != nil || r.Stdout != "back\n" || !strings.Contains(r.Stderr, "to make room for another session's (e2b.max_sessions = 8)") {
		t.Fatalf("a session whose sandbox gave way must be told on its next call: %+v %v", r, err)
	}
	r, err = e.echo("abandoned-12", "again")
	if err != nil || r.Stderr != "" {
		t.Fatalf("told once: %+v %v", r, err)
	}

	// Every session with a sandbox running a call: the next session is refused, naming the key.
	var wg sync.WaitGroup
	for i := 0; i < cap; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.run("run_command", fmt.Sprintf("busy-%d", i), 20*time.Second, 1<<16, map[string]any{"command": "sleep 4"})
		}()
	}
	deadline := time.Now().Add(15 * time.Second)
	for busy := 0; busy < cap; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d busy sessions started", busy)
		}
		time.Sleep(50 * time.Millisecond)
		busy = 0
		for _, sb := range f.Live() {
			if sb.Procs > 0 {
				busy++
			}
		}
	}
	_, err = e.echo("late", "x")
	var ref *executor.Refusal
	if err == nil || !errors.As(err, &ref) || ref.Rule != "e2b.max_sessions" || !strings.Contains(err.Error(), "each running a call") {
		t.Fatalf("with every session's sandbox running a call, a new session must be refused naming e2b.max_sessions: %v", err)
	}
	wg.Wait()
	if r, err := e.echo("late", "x"); err != nil || r.Stdout != "x\n" {
		t.Fatalf("once the calls ended, the new session is served: %+v %v", r, err)
	}
	e.ex.Close()
	e.noLeaks()
}

// E2B's own limit binds first (a smaller plan than e2b.max_sessions assumes, or sandboxes serve
// does not count): a create answered 429 kills the least recently used idle session's sandbox
// and is tried once more; with none idle the error says whose sandboxes hold the quota, advising
// limits.max_concurrent only when serve's own calls do.
func TestE2BQuotaEvictsIdle(t *testing.T) {
	f := fakeWithLimit(t, 4)
	p := testPolicy("session")
	e2bsec.Of(p).MaxSessions = 100
	e := envOn(t, f, p, nil)
	for i := 0; i < 4; i++ {
		if _, err := e.echo(fmt.Sprintf("abandoned-%d", i), "hi"); err != nil {
			t.Fatalf("abandoned session %d: %v", i, err)
		}
	}
	r, err := e.echo("victim", "served")
	if err != nil || r.Stdout != "served\n" {
		t.Fatalf("E2B's limit reached by idle sessions: another session's call must still be served: %+v %v", r, err)
	}
	if st := f.Stats(); st.Refused == 0 {
		t.Fatalf("the test did not reach E2B's limit: %+v", st)
	}
	r, err = e.echo("abandoned-0", "back")
	if err != nil || r.Stdout != "back\n" || !strings.Contains(r.Stderr, "E2B refused a new sandbox (429") {
		t.Fatalf("the least recently used idle session gave way and is told on its next call: %+v %v", r, err)
	}

	// Every sandbox of this serve running a call: said so, and max_concurrent advised.
	var wg sync.WaitGroup
	for _, s := range []string{"victim", "abandoned-0", "abandoned-2", "abandoned-3"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.run("run_command", s, 20*time.Second, 1<<16, map[string]any{"command": "sleep 3"})
		}()
	}
	deadline := time.Now().Add(15 * time.Second)
	for busy := 0; busy < 4; {
		if time.Now().After(deadline) {
			t.Fatalf("only %d busy sessions started", busy)
		}
		time.Sleep(50 * time.Millisecond)
		busy = 0
		for _, sb := range f.Live() {
			if sb.Procs > 0 {
				busy++
			}
		}
	}
	_, err = e.echo("late", "x")
	if err == nil || !strings.Contains(err.Error(), "every sandbox this serve holds (4) is running a call") || !strings.Contains(err.Error(), "limits.max_concurrent") {
		t.Fatalf("429 with every sandbox busy: %v", err)
	}
	wg.Wait()
	e.ex.Close()
	e.noLeaks()

	// The quota taken outside serve: said so, without advice about serve's own limits.
	for i := 0; i < 4; i++ {
		req, _ := http.NewRequest("POST", f.URL()+"/sandboxes", bytes.NewReader([]byte(`{"templateID":"base","timeout":60}`)))
		req.Header.Set("X-API-Key", testKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 201 {
			t.Fatalf("a sandbox outside serve: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	e2 := envOn(t, f, p, nil)
	_, err = e2.echo("s", "x")
	if err == nil || !strings.Contains(err.Error(), "this serve holds no sandbox, so the quota is taken outside it") || strings.Contains(err.Error(), "max_concurrent") {
		t.Fatalf("429 with the quota taken elsewhere: %v", err)
	}
}

// atk35 F7: serve's start refuses E2B_API_URL or E2B_SANDBOX_URL (and api_url, judged at load
// too) over plain http to a host that is not loopback: the key and each sandbox's access token
// would cross the network in clear text. Loopback stand-ins (the harness's, these tests') pass.
func TestPlainHTTPOnlyToLoopback(t *testing.T) {
	for _, c := range []struct {
		name, url string
		ok        bool
	}{
		{"E2B_API_URL", "http://192.0.2.2:18790", false},
		{"E2B_SANDBOX_URL", "http://192.0.2.2:18790", false},
		{"E2B_API_URL", "http://example.com", false},
		{"E2B_API_URL", "http://127.0.0.1:18790", true},
		{"E2B_SANDBOX_URL", "http://[::1]:18790", true},
		{"E2B_SANDBOX_URL", "http://localhost:18790", true},
		{"E2B_API_URL", "https://192.0.2.2", true},
	} {
		env := map[string]string{keyEnv: testKey, c.name: c.url}
		ex, err := New(testPolicy("call"), Options{Getenv: func(k string) string { return env[k] }, NoReap: true, NoUndertaker: true})
		if ex != nil {
			ex.Close()
		}
		if c.ok && err != nil {
			t.Errorf("%s=%s refused: %v", c.name, c.url, err)
		}
		if !c.ok && (err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), "use https://")) {
			t.Errorf("%s=%s: %v, want serve's start refused naming the variable and https://", c.name, c.url, err)
		}
	}
	p := testPolicy("call")
	e2bsec.Of(p).APIURL = "http://192.0.2.2:18790" // a policy built in code, not loaded (load refuses it too)
	env := map[string]string{keyEnv: testKey}
	if _, err := New(p, Options{Getenv: func(k string) string { return env[k] }, NoReap: true, NoUndertaker: true}); err == nil || !strings.Contains(err.Error(), "e2b.api_url") {
		t.Errorf("api_url plain http to a remote host: %v", err)
	}
}
