package serve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// A session its client ends (HTTP DELETE) while one of its calls waits for a slot: the call is
// refused and audited so, never run; before, it ran after the client had gone (it wrote the
// workspace) and the DELETE was held until then (atk34 N1). The SDK ends the POSTs of a deleted
// session without an answer either way. Red under mutant session-end-queued-runs.
func TestHTTPDeletedSessionsWaitingCallsDoNotRun(t *testing.T) {
	fake := &fakeExec{}
	addr, path := serveFakeHTTP(t, fake, 1, nil)
	url := "http://" + addr + HTTPPath
	a, _ := initializedSession(t, url)
	b, bh := initializedSession(t, url)
	queued := queueBehind(t, fake, addr, a, b, "3s", "after-the-end")
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	for k, v := range bh {
		req.Header.Set(k, v)
	}
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	queued.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(queued), nil)
	if err != nil {
		t.Fatalf("the queued call's answer: %v", err)
	}
	// (the SDK ends the POSTs of a deleted session without an answer: the refusal is audited)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	time.Sleep(3 * time.Second) // the held call ends; a queued call would then have run
	fake.mu.Lock()
	ran := slices.Contains(fake.sessions, b)
	fake.mu.Unlock()
	if ran {
		t.Errorf("the ended session's queued call ran")
	}
	if log, _ := os.ReadFile(path); !strings.Contains(string(log), `"rule":"`+RuleRequestGone+`"`) {
		t.Errorf("no refusal in the audit log:\n%s", log)
	}
}

// A DELETE the SDK refuses (an unsupported protocol version: 400) ends nothing: the session's
// call waiting for a slot runs (atk34b F2: it was refused as if its session had ended). Red under
// mutant delete-ends-refused.
func TestHTTPRefusedDeleteEndsNothing(t *testing.T) {
	fake := &fakeExec{}
	addr, _ := serveFakeHTTP(t, fake, 1, nil)
	url := "http://" + addr + HTTPPath
	a, _ := initializedSession(t, url)
	b, bh := initializedSession(t, url)
	queued := queueBehind(t, fake, addr, a, b, "1s", "still-live")
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	for k, v := range bh {
		req.Header.Set(k, v)
	}
	req.Header.Set("Mcp-Protocol-Version", "1999-01-01")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode < 400 {
		t.Fatalf("the DELETE with a protocol version the SDK does not know: %d, want it refused", resp.StatusCode)
	}
	queued.SetReadDeadline(time.Now().Add(20 * time.Second))
	ans, err := http.ReadResponse(bufio.NewReader(queued), nil)
	if err != nil {
		t.Fatalf("the queued call's answer: %v", err)
	}
	body, _ := io.ReadAll(ans.Body)
	ans.Body.Close()
	if !strings.Contains(string(body), "still-live") {
		t.Errorf("the live session's queued call after a refused DELETE: %d %.300s", ans.StatusCode, body)
	}
}

// queueBehind holds the one slot with a call of session a sleeping for hold, then sends a call of
// session b echoing echo, which waits for the slot; it returns b's connection.
func queueBehind(t *testing.T, fake *fakeExec, addr, a, b, hold, echo string) net.Conn {
	t.Helper()
	held := rawCall(t, addr, a, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"`+hold+`"}}}`)
	t.Cleanup(func() { held.Close() })
	for start := time.Now(); fake.running.Load() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the held call did not start")
		}
	}
	queued := rawCall(t, addr, b, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"`+echo+`"}}}`)
	t.Cleanup(func() { queued.Close() })
	time.Sleep(300 * time.Millisecond) // it waits for the slot
	return queued
}
