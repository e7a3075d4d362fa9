package serve

import (
	"bytes"
	"context"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// startHTTP runs serve over HTTP on a free loopback port and returns its URL, a stop function
// and Run's result.
func startHTTP(t *testing.T, ex executor.Executor, h HTTPOptions) (string, context.CancelFunc, chan error) {
	t.Helper()
	return startHTTPPolicy(t, testPolicy(5*time.Second, 4), ex, h)
}

// startHTTPPolicy is startHTTP with a policy of the test's own.
func startHTTPPolicy(t *testing.T, p *policy.Policy, ex executor.Executor, h HTTPOptions) (string, context.CancelFunc, chan error) {
	t.Helper()
	return startHTTPOptions(t, p, ex, Options{HTTP: &h})
}

// startHTTPOptions is startHTTPPolicy with serve's options of the test's own (o.HTTP set).
func startHTTPOptions(t *testing.T, p *policy.Policy, ex executor.Executor, o Options) (string, context.CancelFunc, chan error) {
	t.Helper()
	addrc := make(chan net.Addr, 1)
	h := o.HTTP
	if h.Addr == "" {
		h.Addr = "127.0.0.1:0"
	}
	h.Listening = func(a net.Addr) { addrc <- a }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Run(ctx, p, ex, o) }()
	select {
	case a := <-addrc:
		t.Cleanup(func() { cancel(); <-done })
		return "http://" + a.String() + HTTPPath, cancel, done
	case err := <-done:
		t.Fatalf("serve --http did not start: %v", err)
	case <-time.After(10 * time.Second):
		t.Fatal("serve --http did not start")
	}
	return "", nil, nil
}

func httpClient(t *testing.T, url, token string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: http.DefaultTransport}
	if token != "" {
		hc.Transport = bearer{token, http.DefaultTransport}
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	return cs
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`

// postRequest is a client's POST of body to url with the headers hdr.
func postRequest(url, body string, hdr map[string]string) *http.Request {
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	resp, err := http.DefaultClient.Do(postRequest(url, body, hdr))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b)
}

func TestHTTPTokenOriginAndBody(t *testing.T) {
	const token = "s3cret-token-for-test"
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: token, MaxBody: 64 << 10})
	if code, body := post(t, url, initBody, nil); code != http.StatusUnauthorized || strings.Contains(body, token) {
		t.Errorf("no token: %d %q", code, body)
	}
	if code, _ := post(t, url, initBody, map[string]string{"Authorization": "Bearer wrong"}); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d", code)
	}
	auth := map[string]string{"Authorization": "Bearer " + token}
	if code, body := post(t, url, initBody, auth); code != http.StatusOK || !strings.Contains(body, `"serverInfo"`) {
		t.Errorf("right token: %d %q", code, body)
	}
	foreign := map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}
	if code, _ := post(t, url, initBody, foreign); code != http.StatusForbidden {
		t.Errorf("foreign Origin: %d, want 403", code)
	}
	local := map[string]string{"Authorization": "Bearer " + token, "Origin": "http://localhost:3000"}
	if code, _ := post(t, url, initBody, local); code != http.StatusOK {
		t.Errorf("loopback Origin: %d, want 200", code)
	}
	rebound := map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	for k, v := range rebound {
		req.Header.Set(k, v)
	}
	req.Host = "evil.example"
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("DNS-rebound Host: %v %v, want 403", resp.StatusCode, err)
	}
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"x":"` + strings.Repeat("a", 128<<10) + `"}}`
	if code, _ := post(t, url, big, auth); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", code)
	}
	if code, body := post(t, url, "{not json", auth); code < 400 || code >= 500 || !strings.Contains(body, "-32700") && !strings.Contains(strings.ToLower(body), "json") {
		t.Errorf("malformed JSON: %d %q", code, body)
	}
	// The server is still up and serves a real client.
	cs := httpClient(t, url, token)
	r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "up"}})
	if err != nil || !strings.Contains(text(r), "up") {
		t.Fatalf("call after the bad requests: %v %q", err, text(r))
	}
	cs.Close()
}

func TestHTTPRefusesOpenBindWithoutToken(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0", "192.0.2.1:80"} {
		if err := CheckHTTPBind(addr, ""); err == nil || !strings.Contains(err.Error(), "MCPSANDBOX_TOKEN") {
			t.Errorf("%s without a token: %v", addr, err)
		}
	}
	for _, addr := range []string{"127.0.0.1:0", "localhost:8765", "[::1]:0"} {
		if err := CheckHTTPBind(addr, ""); err != nil {
			t.Errorf("%s: %v", addr, err)
		}
	}
	if err := CheckHTTPBind("0.0.0.0:0", "t"); err != nil {
		t.Errorf("open bind with a token: %v", err)
	}
}

// Each HTTP session has its own id in calls, and ends (EndSession) when its client leaves.
func TestHTTPSessionsAreSeparate(t *testing.T) {
	f := &fakeExec{}
	url, _, _ := startHTTP(t, f, HTTPOptions{})
	a, b := httpClient(t, url, ""), httpClient(t, url, "")
	for _, cs := range []*mcp.ClientSession{a, b, a} {
		if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "x"}}); err != nil {
			t.Fatal(err)
		}
	}
	a.Close() // DELETE: the session is over
	deadline := time.Now().Add(10 * time.Second)
	for {
		f.mu.Lock()
		sess, ended := append([]string(nil), f.sessions...), append([]string(nil), f.ended...)
		f.mu.Unlock()
		if len(ended) == 1 {
			if sess[0] != sess[2] || sess[0] == sess[1] || ended[0] != sess[0] {
				t.Fatalf("sessions %q ended %q", sess, ended)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("EndSession never called after the client closed: sessions %q ended %q", sess, ended)
		}
		time.Sleep(20 * time.Millisecond)
	}
	b.Close()
}

// At shutdown a running call gets the grace period, then is cancelled; every session ends.
func TestHTTPGracefulShutdown(t *testing.T) {
	f := &fakeExec{}
	url, stop, done := startHTTP(t, f, HTTPOptions{Grace: 300 * time.Millisecond})
	cs := httpClient(t, url, "")
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"sleep": "1h"}})
	for f.running.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	select {
	case err := <-done:
		done <- err // for the cleanup
		if err != nil {
			t.Fatalf("Run at shutdown: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("shutdown did not finish")
	}
	if n := f.running.Load(); n != 0 {
		t.Fatalf("%d calls still running after shutdown", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ended) != 1 {
		t.Fatalf("sessions ended at shutdown: %q", f.ended)
	}
	if _, err := http.Post(url, "application/json", bytes.NewReader([]byte(initBody))); err == nil {
		t.Fatal("the server still answers after shutdown")
	}
}

// Refused requests (401, 403) are logged with method, path, remote and reason, never the token,
// and a flood of them is rate-limited: at most refusalBurst lines per window, the rest counted.
func TestHTTPRefusalsLogged(t *testing.T) {
	const token = "s3cret-token-for-log-test"
	var logs testenv.LockedBuffer
	addrc := make(chan net.Addr, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, testPolicy(5*time.Second, 4), &fakeExec{}, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			HTTP: &HTTPOptions{Addr: "127.0.0.1:0", Token: token, Listening: func(a net.Addr) { addrc <- a }}})
	}()
	var url string
	select {
	case a := <-addrc:
		url = "http://" + a.String() + HTTPPath
	case err := <-done:
		t.Fatalf("serve --http did not start: %v", err)
	}
	post(t, url, initBody, nil)
	post(t, url, initBody, map[string]string{"Authorization": "Bearer wrong-token-value-xyz"})
	post(t, url, initBody, map[string]string{"Authorization": "Basic dXNlcjpwYXNz"})
	post(t, url, initBody, map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(initBody))
	req.Host = "evil.example"
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("rebound Host: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// A request that is let through is not logged as refused.
	post(t, url, initBody, map[string]string{"Authorization": "Bearer " + token})
	got := logs.String()
	for _, want := range []string{
		`status=401 method=POST path=/mcp remote=127.0.0.1:`,
		`reason="no Authorization header"`, `reason="wrong bearer token"`, `reason="Authorization is not a bearer token"`,
		`status=403`, `origin \"https://evil.example\" is not accepted`,
		`Host \"evil.example\" is not this machine (DNS rebinding protection)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "refused an HTTP request"); n != 5 {
		t.Errorf("%d refusals logged, want 5:\n%s", n, got)
	}
	for _, secret := range []string{token, "wrong-token-value-xyz", "dXNlcjpwYXNz"} {
		if strings.Contains(got, secret) {
			t.Errorf("the log holds a credential (%q):\n%s", secret, got)
		}
	}

	// A flood: 300 bad requests add at most refusalBurst-5 more lines; the rest are counted and
	// said at shutdown.
	hc := &http.Client{}
	for range 300 {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader("{}"))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	cancel()
	<-done
	got = logs.String()
	if n := strings.Count(got, "refused an HTTP request"); n != refusalBurst {
		t.Errorf("after a flood of 300: %d refusals logged, want the limit %d", n, refusalBurst)
	}
	if !strings.Contains(got, "refused HTTP requests not logged individually") || !strings.Contains(got, "count=295") {
		t.Errorf("the held-back refusals are not counted at shutdown:\n%s", got)
	}
	if len(got) > 16<<10 {
		t.Errorf("the flood wrote %d bytes of log", len(got))
	}
}

// The window: after it is over, refusals are logged again and the held-back count is said.
func TestRefusalLogWindow(t *testing.T) {
	var logs testenv.LockedBuffer
	now := time.Unix(1000, 0)
	l := newRefusalLog(slog.New(slog.NewTextHandler(&logs, nil)), func() time.Time { return now })
	r, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1/mcp", nil)
	r.RemoteAddr = "127.0.0.1:5555"
	for range 50 {
		l.refused(r, 401, "no Authorization header")
	}
	now = now.Add(refusalWindow)
	l.refused(r, 401, "no Authorization header")
	got := logs.String()
	if n := strings.Count(got, "refused an HTTP request"); n != refusalBurst+1 {
		t.Errorf("%d lines, want %d:\n%s", n, refusalBurst+1, got)
	}
	if !strings.Contains(got, "count=40") {
		t.Errorf("the 40 held back in the first window are not counted:\n%s", got)
	}
}

// The grace period is for running calls, not for open connections: a connected client whose
// session is idle (its standalone SSE stream open) does not hold shutdown for the grace period.
func TestHTTPShutdownDoesNotWaitForIdleStreams(t *testing.T) {
	url, stop, done := startHTTP(t, &fakeExec{}, HTTPOptions{Grace: time.Minute})
	cs := httpClient(t, url, "")
	if _, err := cs.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	stop()
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Fatalf("Run at shutdown: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("shutdown waited for an idle client's stream (the grace period is a minute)")
	}
	cs.Close()
}

// serve --http without a token says so at WARN: clients that send one connect all the same, so
// nothing else tells the user that any local process can call it (trial36 F3). With a token, no
// such line. Red under mutant serve-http-no-token-quiet.
func TestHTTPWithoutTokenWarns(t *testing.T) {
	for _, token := range []string{"", "s3cret-token-for-warn-test"} {
		var logs testenv.LockedBuffer
		_, cancel, done := startHTTPOptions(t, testPolicy(5*time.Second, 4), &fakeExec{},
			Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), HTTP: &HTTPOptions{Token: token}})
		cancel()
		err := <-done
		done <- err // for startHTTPOptions's cleanup, which waits for it too
		warned := strings.Contains(logs.String(), `level=WARN msg="no bearer token: every local process and user can call this server"`)
		if warned != (token == "") {
			t.Errorf("token %q: warned %v:\n%s", token, warned, logs.String())
		}
	}
}

// serve --http bound beyond this machine says, at WARN, that it speaks plain HTTP (the token and
// every call unencrypted) and what to put in front; on loopback, no such line (trial40 F4). Red
// under mutant serve-http-plain-quiet.
func TestHTTPBeyondLoopbackWarnsPlainHTTP(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "127.0.0.1:0"} {
		var logs testenv.LockedBuffer
		_, cancel, done := startHTTPOptions(t, testPolicy(5*time.Second, 4), &fakeExec{},
			Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), HTTP: &HTTPOptions{Addr: addr, Token: "s3cret-token-for-plain-test"}})
		cancel()
		err := <-done
		done <- err
		warned := strings.Contains(logs.String(), `level=WARN msg="plain HTTP beyond this machine`)
		if warned != (addr == "0.0.0.0:0") {
			t.Errorf("%s: warned %v:\n%s", addr, warned, logs.String())
		}
	}
}

// trial48 F4: a 401 for a bearer token that is wrong, or empty ("Bearer " from an unset
// variable), carries error="invalid_token" (RFC 6750 §3), so a client does not take it for a
// server that wants OAuth (the MCP Inspector did: "Interactive OAuth requires a TTY"); a request
// with no bearer token gets the bare challenge, no error code. Red under mutant
// http-401-no-invalid-token.
func TestHTTP401SaysInvalidToken(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken})
	challenge := func(auth string) string {
		t.Helper()
		r := postRequest(url, initBody, nil)
		if auth != "" {
			r.Header["Authorization"] = []string{auth}
		}
		resp, err := http.DefaultClient.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("Authorization %q: %d, want 401", auth, resp.StatusCode)
		}
		return resp.Header.Get("WWW-Authenticate")
	}
	const invalid = `Bearer realm="mcpsandbox", error="invalid_token", error_description="send Authorization: Bearer <token> (the token serve was started with)"`
	for _, auth := range []string{"Bearer wrong", "bearer " + boundsToken + "x", "Bearer ", "Bearer"} {
		if got := challenge(auth); got != invalid {
			t.Errorf("Authorization %q: WWW-Authenticate %q, want %q", auth, got, invalid)
		}
	}
	for _, auth := range []string{"", "Basic " + boundsToken} {
		if got := challenge(auth); got != `Bearer realm="mcpsandbox"` {
			t.Errorf("Authorization %q: WWW-Authenticate %q, want the bare challenge", auth, got)
		}
	}
}
