package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// initializedSession starts a session with the token over raw HTTP requests and sends
// notifications/initialized; it returns the session id and the headers its requests carry.
func initializedSession(t *testing.T, url string) (string, map[string]string) {
	t.Helper()
	code, sid, body := initSession(t, &http.Client{}, url)
	if code != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %q %.200s", code, sid, body)
	}
	hdr := map[string]string{"Authorization": "Bearer " + boundsToken, sessionIDHeader: sid, "Mcp-Protocol-Version": "2025-06-18"}
	if code, b := post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr); code != http.StatusAccepted {
		t.Fatalf("initialized: %d %.200s", code, b)
	}
	return sid, hdr
}

// serveFakeHTTP runs serve --http with the token over fake (max_concurrent conc, a 30s timeout,
// an audit log) until the test ends; it returns the address and the audit log's path. built, if
// not nil, is given serve's runner.
func serveFakeHTTP(t *testing.T, fake *fakeExec, conc int, built func(*runner)) (addr, auditPath string) {
	t.Helper()
	auditPath = filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(auditPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := HTTPOptions{Addr: "127.0.0.1:0", Token: boundsToken, Grace: 100 * time.Millisecond, built: built}
	addrc := make(chan net.Addr, 1)
	h.Listening = func(a net.Addr) { addrc <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, testPolicy(30*time.Second, conc), fake, Options{HTTP: &h, Audit: al}) }()
	t.Cleanup(func() { cancel(); <-done; al.Close() })
	select {
	case a := <-addrc:
		return a.String(), auditPath
	case err := <-done:
		t.Fatalf("serve --http did not start: %v", err)
	}
	return "", ""
}

// rawCall writes a tools/call of session sid on a new connection and returns the connection
// (the caller reads the answer, or closes it unread).
func rawCall(t *testing.T, addr, sid, call string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\n%s: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s",
		HTTPPath, addr, boundsToken, sessionIDHeader, sid, len(call), call)
	return c
}

// Hostile peer, abandoned calls: a client with the token sends calls with 3 MiB of arguments
// and closes each connection as soon as the request is out. The MCP handler keeps such a call
// going, but with the POST over, the connection bound and the body budget that held its
// arguments while the POST was open no longer count it: every call waited for a slot, its
// arguments held, for up to limits.timeout (40 calls of 1 MiB: serve's heap +80 MiB, without end
// as the client sends). A call whose POST is gone before it gets a slot is refused
// (serve.request_gone) and never run; another session's call is still answered. Red without
// the check (mutant atk19a-http-abandoned-wait).
func TestHTTPAbandonedCallsAreNotQueued(t *testing.T) {
	fake := &fakeExec{}
	var posts *posts
	addr, path := serveFakeHTTP(t, fake, 2, func(r *runner) { posts = r.posts })
	url := "http://" + addr + HTTPPath
	count := func(s string) int {
		b, _ := os.ReadFile(path)
		return strings.Count(string(b), s)
	}
	sid, _ := initializedSession(t, url)
	other := httpClient(t, url, boundsToken)
	defer other.Close()
	callWithin(t, other, 2*time.Second, "before the hostile calls")

	// the hostile session holds one slot with a call on an open connection
	held := rawCall(t, addr, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"30s"}}}`)
	defer held.Close()
	for start := time.Now(); fake.running.Load() < 1; time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 5*time.Second {
			t.Fatal("the held call did not start")
		}
	}
	base := heapInUse()
	pad := strings.Repeat("x", 1<<20)
	const n = 40
	for i := range n {
		c := rawCall(t, addr, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"%s"}}}`, 100+i, pad))
		c.Close()
	}
	// the SDK is done with every abandoned call (serve holds each one's POST until then), or
	// no more get done for 10 s (they wait for a slot)
	last, since := posts.pending(), time.Now()
	for start := time.Now(); posts.pending() > 1 && time.Since(since) < 10*time.Second; time.Sleep(20 * time.Millisecond) {
		if p := posts.pending(); p < last {
			last, since = p, time.Now()
		}
		if time.Since(start) > 180*time.Second { // minutes on a loaded machine under -race
			t.Fatalf("%d calls still in the SDK's hands after %s", posts.pending(), time.Since(start))
		}
	}
	grew := int64(heapInUse()) - int64(base)
	callWithin(t, other, 2*time.Second, fmt.Sprintf("%d abandoned calls of 1 MiB", n))
	t.Logf("%d abandoned calls of 1 MiB: heap grew %d MiB; %d refused by %s", n, grew>>20, count(`"rule":"`+RuleRequestGone+`"`), RuleRequestGone)
	if grew > 32<<20 {
		t.Fatalf("serve's heap grew %d MiB with %d calls of 1 MiB whose connections were closed at once: "+
			"calls whose POST is gone still wait for a slot, their arguments held", grew>>20, n)
	}
	// Not every one: the others were refused 503 by the body budget before their bodies were
	// read (never audited), or, under -race on a loaded machine, their intents waited past the
	// audit lock's bound. The more loaded the machine, the slower the SDK takes the bodies and
	// the more of them the budget refuses: 19 and 9 of 40 were refused by serve.request_gone on
	// loaded runs, 0 with the check switched off.
	if got := count(`"rule":"` + RuleRequestGone + `"`); got < n/8 {
		t.Fatalf("%d of %d abandoned calls audited refused by %s", got, n, RuleRequestGone)
	}
	// the held one alone, or none once its 30 s (the policy's timeout) ran out on a loaded machine
	if got := fake.running.Load(); got > 1 {
		t.Fatalf("%d calls running, want the held one alone", got)
	}
}

// Hostile peer, abandoned calls in the SDK's hands: a client with the token sends calls of
// 512 KiB and closes each connection at once; the calls run (here 20 s each, as a call that
// got a slot does). The SDK keeps each call's message, decoded several times over, until its
// handler returns (about 4 times its body, which the budget charges), but the POST was over at once: the body budget and the connection bound
// no longer counted it, and the client could keep serve holding as many as it sent (800 of
// them, sent faster than serve got through them, took serve's heap to 410 MiB). A POST whose
// client left is held until its call is handled, so the budget still counts it: past it the
// next calls get 503 as their bodies are read, and serve's heap stays near the budget's
// multiple. Red without the hold (mutant atk19a-http-abandoned-hold): no 503, every call held.
func TestHTTPAbandonedCallsStayCounted(t *testing.T) {
	const budget = 8 << 20
	fake := &fakeExec{}
	url, _, _ := startHTTPPolicy(t, testPolicy(30*time.Second, 200), fake, HTTPOptions{Token: boundsToken, BodyBudget: budget, Grace: 100 * time.Millisecond})
	addr := hostAddr(url)
	sid, _ := initializedSession(t, url)
	base := heapInUse()
	pad := strings.Repeat("x", 512<<10)
	const n = 100
	refused := 0
	for i := range n {
		c := rawCall(t, addr, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"20s","echo":"%s"}}}`, 100+i, pad))
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil && resp.StatusCode == http.StatusServiceUnavailable {
			refused++
		}
		c.Close()
	}
	grew := int64(heapInUse()) - int64(base)
	t.Logf("%d abandoned calls of 512 KiB, body budget %d MiB: %d refused 503, %d running; heap grew %d MiB", n, budget>>20, refused, fake.running.Load(), grew>>20)
	if refused < n/2 {
		t.Fatalf("only %d of %d calls whose clients left at once were refused 503: the body budget does not count the calls still in the SDK's hands", refused, n)
	}
	// What the held calls hold decoded is charged (httpbound.HeldPerByte), so the heap stays
	// near the budget; charged their wire bytes, 18 calls were held and the heap grew 37 MiB
	// under this 8 MiB budget (mutant http-body-held).
	if grew > 2*budget {
		t.Fatalf("serve's heap grew %d MiB with %d abandoned calls of 512 KiB under a %d MiB body budget: over twice the budget, "+
			"so the budget does not count what a decoded call holds", grew>>20, n, budget>>20)
	}
}
