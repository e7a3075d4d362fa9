package serve

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// Hostile peer, answers: a client with the token that sends a call and never reads its answer
// held the handler, its session (busy, never evicted) and the encoded answer (tens of MB for a
// read_file of control bytes: each escaped to six bytes, twice) for as long as it liked, and
// 256 connections hold 256 answers. An answer whose write makes no progress for WriteStall is
// dropped with its connection. Red without the bound (mutant http-write-stall): the whole
// answer is still there to read after ten stall periods.
func TestHTTPStalledReaderIsCut(t *testing.T) {
	const stall = 300 * time.Millisecond
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{Token: boundsToken, WriteStall: stall})
	addr := hostAddr(url)
	sid, hdr := initializedSession(t, url)
	// control: a client that reads gets the whole answer
	// 1.5 MiB of control bytes: six bytes each in JSON, twice, about 18 MB of answer, over any socket
	// buffers (a 6 MB answer fitted in this host's, now and then)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1572864}}}`
	if code, b := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"short"}}}`, hdr); code != http.StatusOK || !strings.Contains(b, "short") {
		t.Fatalf("a call read at once: %d %.300s", code, b)
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.(*net.TCPConn).SetReadBuffer(64 << 10) // fixed (no autotuning), not so small that reading crawls
	fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\n%s: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s",
		HTTPPath, addr, boundsToken, sessionIDHeader, sid, len(call), call)
	// wait for the answer to begin (under load, making it took seconds: a fixed pause could
	// end before it began), then read nothing for ten stall periods
	c.SetReadDeadline(time.Now().Add(60 * time.Second))
	head := make([]byte, 12)
	if _, err := io.ReadFull(c, head); err != nil {
		t.Fatalf("no answer began: %v", err)
	}
	time.Sleep(10 * stall)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	rest, err := io.ReadAll(c)
	got := append(head, rest...)
	if !bytes.Contains(got, []byte("200 OK")) {
		t.Fatalf("no answer began: %v %.300q", err, got)
	}
	t.Logf("read %d bytes in all (%v), ends %q", len(got), err, got[max(0, len(got)-40):])
	if bytes.HasSuffix(got, []byte("\r\n0\r\n\r\n")) || bytes.Contains(got, []byte(`"duration_ms"`)) {
		t.Fatalf("the answer to a client that read nothing for %s was still written whole (%d bytes): no write stall bound", 10*stall, len(got))
	}
}

// Hostile peer, answers over HTTP: a client that sends calls with large answers on connections
// it reads slowly (or not at all) had each answer held by serve while it was written, the
// call's slot long free, as many as it sent: 60 such connections took serve to 4 GB and another
// client's echo to 18 s (attack round atk25b, F1). Now an answer counts against its session's
// and everyone's unread-answer bounds until the request that carries it is over: past them no
// new call runs for that session, while another session's calls do. Red without the count
// (mutant http-answers-unheld: every call runs, its answer held).
func TestHTTPUnreadAnswersStopNewCalls(t *testing.T) {
	ex := &fakeExec{}
	p := testPolicy(5*time.Second, 4)
	// the fake's answers are as large as its output may be: each call's reservation (capped at
	// the session's bound) covers what it makes, as a real executor's capped output is covered
	p.Limits.MaxOutputBytes = 2 << 20
	url, _, _ := startHTTPPolicy(t, p, ex, HTTPOptions{Token: boundsToken, WriteStall: time.Minute})
	addr := hostAddr(url)
	sid, hdr := initializedSession(t, url)
	hdr["Authorization"] = "Bearer " + boundsToken
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	// 1 MiB of control bytes: about 12 MB of answer, over the socket buffers of a client that
	// reads nothing, and an estimate past the session's bound
	const conns = 6
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
		call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1048576}}}`, 10+i)
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\n"+
			"Accept: application/json, text/event-stream\r\n%s: %s\r\nMcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s",
			HTTPPath, addr, boundsToken, sessionIDHeader, sid, len(call), call)
	}
	time.Sleep(2 * time.Second)
	// one call at a time reserves the session's bound; once made, its unread answer holds it
	if n := ran(); n > 1 {
		t.Fatalf("%d of %d calls ran while their answers went unread over HTTP: the answers held are unbounded", n, conns)
	}
	// another session is not held by this one's unread answers
	_, other := initializedSession(t, url)
	other["Authorization"] = "Bearer " + boundsToken
	start := time.Now()
	if code, b := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"short"}}}`, other); code != http.StatusOK || !strings.Contains(b, "short") {
		t.Fatalf("another session's call: %d %.300s", code, b)
	}
	t.Logf("%d of %d calls ran while unread; another session's call took %v", ran(), conns, time.Since(start).Round(time.Millisecond))
}

// Hostile peer, answers over many sessions: one client spreading calls with large answers over
// many sessions, each under its own bound, whose sockets it never reads, filled the bound for
// all clients, and every other client's calls waited their whole timeout and were refused
// (attack round atk34, F3). Now the bound is shared by session: a session holding less than
// its share is let in, the answer of the session holding the most cut (its connection
// closed) to make room, and what serve counts stays at the bound. Red without the share
// (mutant unread-fair-share): the other session's call waits its 5 s and is refused.
func TestHTTPUnreadAnswersSharedBySessions(t *testing.T) {
	ex := &fakeExec{}
	p := testPolicy(5*time.Second, 4)
	p.Limits.MaxOutputBytes = 2 << 20 // as TestHTTPUnreadAnswersStopNewCalls
	al, path := tempAudit(t)
	var r *runner
	url, _, _ := startHTTPOptions(t, p, ex, Options{Audit: al,
		HTTP: &HTTPOptions{Token: boundsToken, WriteStall: time.Minute, built: func(x *runner) { r = x }}})
	counted := func() int64 { r.unread.mu.Lock(); defer r.unread.mu.Unlock(); return r.unread.all }
	var peak atomic.Int64
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			peak.Store(max(peak.Load(), counted()))
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	addr := hostAddr(url)
	// one client, eight sessions, a call each whose answer (about 12 MB, counted 48 MiB: past a
	// session's bound, three past everyone's) it never reads
	const hogs = 8
	for i := range hogs {
		sid, _ := initializedSession(t, url)
		c := rawCall(t, addr, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1048576}}}`, 10+i))
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	}
	for end := time.Now().Add(10 * time.Second); counted() < MaxUnreadAnswersAll && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	if n := counted(); n < MaxUnreadAnswersAll {
		t.Fatalf("the unread answers of %d sessions count %d MiB, want the bound for all (%d MiB) reached", hogs, n>>20, MaxUnreadAnswersAll>>20)
	}
	_, other := initializedSession(t, url)
	other["Authorization"] = "Bearer " + boundsToken
	start := time.Now()
	code, b := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"short"}}}`, other)
	took := time.Since(start)
	if code != http.StatusOK || !strings.Contains(b, "short") {
		t.Fatalf("another client's call after %v while %d sessions of one client held the answers of all: %d %.300s", took.Round(time.Millisecond), hogs, code, b)
	}
	if took > 4*time.Second { // 36–65 ms here, 0.3–1.1 s under -race; refused at 5 s without the share
		t.Fatalf("another client's call took %v of its 5 s: it waited for one client's unread answers", took)
	}
	// serve counts, as before, at most the bound and one call's reservation past it
	if pk := peak.Load(); pk > MaxUnreadAnswersAll+MaxUnreadAnswers {
		t.Fatalf("unread answers counted %d MiB at their peak, past the bound (%d MiB) and one call's reservation", pk>>20, MaxUnreadAnswersAll>>20)
	}
	// every call that ran, its answer cut or not, has its outcome on record
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	audited := func() int { b, _ := os.ReadFile(path); return strings.Count(string(b), `"decision":"ran"`) }
	for end := time.Now().Add(10 * time.Second); audited() < ran() && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	if a, n := audited(), ran(); a != n || n <= 1+int(MaxUnreadAnswersAll/MaxUnreadAnswers) {
		t.Fatalf("%d calls ran, %d audited as run: want each audited, and more run than the bound holds answers of (answers cut)", n, a)
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	t.Logf("%d calls ran; another client's call took %v; counted at peak %d MiB; heap in use %d MiB", ran(), took.Round(time.Millisecond), peak.Load()>>20, ms.HeapInuse>>20)
}

// tempAudit is an audit log in the test's temporary directory, and its path.
func tempAudit(t *testing.T) (*audit.Log, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	return al, path
}
