package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const boundsToken = "bounds-test-token-0123456789"

// hostAddr is the host:port of a serve URL.
func hostAddr(url string) string {
	return strings.TrimSuffix(strings.TrimPrefix(url, "http://"), HTTPPath)
}

// callWithin calls the fake tool on cs and fails unless the answer comes within d.
func callWithin(t *testing.T, cs *mcp.ClientSession, d time.Duration, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "still here"}})
	if err != nil || !strings.Contains(text(r), "still here") {
		t.Fatalf("%s: the token client's call was not answered within %s: %v", what, d, err)
	}
}

// freshClient connects a new session over new connections (no keep-alive pool shared with
// earlier clients), with the token.
func freshClient(t *testing.T, url, token string, timeout time.Duration) (*mcp.ClientSession, error) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, tr}}}, nil)
}

// dripAfterHeader opens a connection that sends a POST header without a token, a few bytes of
// a 100 KB body, and then a byte every interval until stop is closed. It returns the
// connection.
func dripAfterHeader(t *testing.T, addr string, interval time.Duration, stop chan struct{}) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{\"jsonrpc\"", HTTPPath, addr)
	go func() {
		tk := time.NewTicker(interval)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	return c
}

// Hostile peer, connections: 2,000 idle connections without a token, and some that drip a
// body after their header, are held open; a client with the token still gets in, over an
// existing session and over new connections, within 1 s. Red without the bound on
// unauthenticated connections (mutant http-unauth-cap): the total fills with them and the
// token client's connection is refused.
func TestHTTPUnauthenticatedFloodDoesNotLockOut(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, MaxConns: 64})
	addr := hostAddr(url)
	cs := httpClient(t, url, boundsToken)
	defer cs.Close()
	callWithin(t, cs, time.Second, "before the flood")

	stop := make(chan struct{})
	defer close(stop)
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for i := range 2000 {
		if i%100 == 0 {
			held = append(held, dripAfterHeader(t, addr, 50*time.Millisecond, stop))
			continue
		}
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		held = append(held, c)
	}
	time.Sleep(200 * time.Millisecond) // let serve accept what it will
	callWithin(t, cs, time.Second, "2,000 idle unauthenticated connections held open")
	fresh, err := freshClient(t, url, boundsToken, 2*time.Second)
	if err != nil {
		t.Fatalf("a new token client could not connect during the flood: %v", err)
	}
	defer fresh.Close()
	callWithin(t, fresh, time.Second, "a new session during the flood")
}

// A refused (401) request's connection is closed once the answer is out: a client that sends
// a header and then drips its body cannot hold it (net/http would read up to 256 KiB of the
// body first, as slowly as it comes, before even answering).
func TestHTTPRefusedConnectionClosesAtOnce(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken})
	stop := make(chan struct{})
	defer close(stop)
	c := dripAfterHeader(t, hostAddr(url), 20*time.Millisecond, stop)
	defer c.Close()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	start := time.Now()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a request without a token while its body drips: %v", err)
	}
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	io.Copy(io.Discard, resp.Body)
	var b [1]byte
	if _, err := c.Read(b[:]); err == nil || errorsIsTimeout(err) {
		t.Fatalf("the refused connection is still open after %s while the body drips: %v", time.Since(start), err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the refused connection took %s to close", d)
	}
}

func errorsIsTimeout(err error) bool {
	ne, ok := err.(net.Error)
	return ok && ne.Timeout()
}

// A request with the token whose body drips is cut at the body deadline.
func TestHTTPSlowBodyIsCut(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, BodyTimeout: 300 * time.Millisecond})
	addr := hostAddr(url)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{", HTTPPath, addr, boundsToken)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.Copy(io.Discard, c)
	if errorsIsTimeout(err) {
		t.Fatalf("a dripping body still holds its connection after %s", time.Since(start))
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the dripping body was cut after %s, want about 300ms", d)
	}
}

// initSession starts a session with a raw initialize and returns its status and session id.
func initSession(t *testing.T, hc *http.Client, url string) (int, string, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+boundsToken)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, resp.Header.Get(sessionIDHeader), string(b)
}

// Live sessions are capped: past limits.max_sessions a new session gets 503 saying which bound;
// the sessions already open keep working; a session that ends frees its place.
func TestHTTPSessionCap(t *testing.T) {
	const max = 5
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, MaxSessions: max})
	cs := httpClient(t, url, boundsToken)
	defer cs.Close()
	hc := &http.Client{}
	var ids []string
	var refused int
	for range 200 {
		code, id, body := initSession(t, hc, url)
		switch code {
		case http.StatusOK:
			ids = append(ids, id)
		case http.StatusServiceUnavailable:
			refused++
			if !strings.Contains(body, "limits.max_sessions") || !strings.Contains(body, fmt.Sprint(max)) {
				t.Fatalf("the 503 does not name the bound: %q", body)
			}
		default:
			t.Fatalf("initialize: %d %q", code, body)
		}
	}
	if len(ids) != max-1 || refused != 200-(max-1) {
		t.Fatalf("%d sessions started, %d refused; want %d started beside the client's own", len(ids), refused, max-1)
	}
	callWithin(t, cs, time.Second, "sessions at the bound")
	// One ends (DELETE): a new one may start.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	req.Header.Set("Authorization", "Bearer "+boundsToken)
	req.Header.Set(sessionIDHeader, ids[0])
	if resp, err := hc.Do(req); err != nil || resp.StatusCode/100 != 2 {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, _, _ := initSession(t, hc, url)
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a session ended but a new one still gets %d", code)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A session without a request for limits.session_idle is ended: its executor state ends
// (EndSession with its id), its place is free, and serve forgets it (the session map shrinks).
func TestHTTPSessionIdleExpiry(t *testing.T) {
	f := &fakeExec{}
	before := countTracked()
	url, _, _ := startHTTP(t, f, HTTPOptions{Token: boundsToken, MaxSessions: 2, SessionIdle: 300 * time.Millisecond})
	cs := httpClient(t, url, boundsToken)
	callWithin(t, cs, time.Second, "a session that then goes idle")
	f.mu.Lock()
	id := f.sessions[0]
	f.mu.Unlock()
	hc := &http.Client{}
	if code, _, _ := initSession(t, hc, url); code != http.StatusOK { // abandoned at once
		t.Fatalf("second session: %d", code)
	}
	if code, _, _ := initSession(t, hc, url); code != http.StatusServiceUnavailable {
		t.Fatalf("third session past the bound of 2: %d, want 503", code)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		ended := append([]string(nil), f.ended...)
		f.mu.Unlock()
		if len(ended) == 2 && (ended[0] == id || ended[1] == id) && countTracked() == before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("idle sessions not ended: EndSession got %q (want %q and the abandoned one); %d tracked, %d before",
				ended, id, countTracked(), before)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, _, _ := initSession(t, hc, url); code != http.StatusOK {
		t.Fatalf("a new session after the idle ones expired: %d", code)
	}
	// The expired client's next request is refused (the session is gone), not served.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "x"}}); err == nil {
		t.Fatal("an expired session still answered")
	}
	cs.Close()
}

func countTracked() int {
	n := 0
	sessions.Range(func(any, any) bool { n++; return true })
	return n
}

// Authorization's scheme is matched without regard to case, with one or more spaces after it
// (RFC 7235); anything else is still refused.
func TestHTTPBearerSchemeCaseInsensitive(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken})
	for _, v := range []string{"bearer " + boundsToken, "BEARER " + boundsToken, "Bearer   " + boundsToken, "bEaReR " + boundsToken} {
		if code, body := post(t, url, initBody, map[string]string{"Authorization": v}); code != http.StatusOK {
			t.Errorf("Authorization %q: %d %q", strings.Replace(v, boundsToken, "TOKEN", 1), code, body)
		}
	}
	for _, v := range []string{"bearer" + boundsToken, "Basic " + boundsToken, "bearer " + boundsToken + "x", "bearer " + boundsToken[1:], "Bearer", "bearer "} {
		if code, _ := post(t, url, initBody, map[string]string{"Authorization": v}); code != http.StatusUnauthorized {
			t.Errorf("Authorization %q: %d, want 401", v, code)
		}
	}
}

// Many abandoned sessions at once (concurrently): the bound holds, never overshoots.
func TestHTTPSessionCapConcurrent(t *testing.T) {
	const max = 10
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, MaxSessions: max})
	var mu sync.Mutex
	ok := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			hc := &http.Client{Transport: &http.Transport{}}
			for range 50 {
				if code, _, _ := initSession(t, hc, url); code == http.StatusOK {
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if ok != max {
		t.Fatalf("%d sessions started concurrently, want exactly the bound %d", ok, max)
	}
}
