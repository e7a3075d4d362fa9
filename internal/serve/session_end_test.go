package serve

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call that waits for a slot while its HTTP session is deleted never reaches the executor
// after the session's EndSession: one that did would have it make the session again (a docker
// session's container, kept until docker.session_idle), the leak attack round atk24b suspected.
// It holds because serve hears of a session's end only once its calls in flight are done (the
// SDK's ServerSession.Wait): the waiting call runs, then the session ends.
func TestHTTPSessionEndsAfterItsWaitingCall(t *testing.T) {
	f := &fakeExec{}
	url, _, _ := startHTTPPolicy(t, testPolicy(20*time.Second, 1), f, HTTPOptions{})
	y, x := httpClient(t, url, ""), httpClient(t, url, "")
	defer y.Close()
	defer x.Close()
	go y.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"sleep": "3s"}})
	for f.running.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		x.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "late"}})
	}()
	time.Sleep(time.Second) // x's call waits for the slot y's holds (a second: a loaded machine's time to send it)
	// Its session deleted by a request of its own (another client holding its id), its POST open.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Mcp-Session-Id", x.ID())
	if resp, err := http.DefaultClient.Do(req); err != nil {
		t.Fatal(err)
	} else {
		resp.Body.Close()
	}
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting call did not end")
	}
	// The session ends once its calls in flight are done: the waiting call's answer can reach the
	// client a moment before that (a loaded machine), so its end is waited for, bounded.
	ended := func() bool { f.mu.Lock(); defer f.mu.Unlock(); return slices.Contains(f.ended, x.ID()) }
	for deadline := time.Now().Add(10 * time.Second); !ended() && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if !slices.Contains(f.ended, x.ID()) {
		t.Fatalf("the deleted session was not ended (EndSession %q)", f.ended)
	}
	if i := slices.Index(f.events, "end "+x.ID()); slices.Contains(f.events[i:], "call "+x.ID()) {
		t.Errorf("a call of session %s reached the executor after its EndSession: %q", x.ID(), f.events)
	}
	t.Logf("events: %q", f.events)
}
