package serve

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A request under an id a request not yet answered holds is refused at once by serve's stdio
// transport with -32600 and id null, never reaching the SDK (which dropped it without an answer,
// leaving lineConn a pending entry no answer removed: attack round atk45b F1, F2; mutant
// stdio-id-in-use). Ids are judged as the SDK judges them: "\u006b" is "k", but "7" is not 7
// (7.0, which the SDK reads as 7, is refused as no integer). More refusals than MaxInflight are answered while the call runs: none holds a slot.
// An id reused after its answer is an ordinary request.
func TestStdioReusedIDRefused(t *testing.T) {
	ex, in, outR := unreadStdio(t, 32<<20)
	lines := make(chan map[string]json.RawMessage, 1000)
	go func() {
		br := bufio.NewReaderSize(outR, 1<<20)
		for {
			l, err := br.ReadString('\n')
			if err != nil {
				return
			}
			var m map[string]json.RawMessage
			_ = json.Unmarshal([]byte(l), &m)
			lines <- m
		}
	}()
	w := func(s string, a ...any) { send(t, in, fmt.Sprintf(s, a...)) }
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	w(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"3s"}}}`)
	w(`{"jsonrpc":"2.0","id":"k","method":"tools/call","params":{"name":"fake","arguments":{"sleep":"3s"}}}`)
	const dups = MaxInflight + 6
	for range dups {
		w(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	}
	w(`{"jsonrpc":"2.0","id":7.0,"method":"ping"}`)
	w(`{"jsonrpc":"2.0","id":"\u006b","method":"ping"}`)
	w(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"dup"}}}`)
	w(`{"jsonrpc":"2.0","id":"7","method":"ping"}`)
	refused, other := 0, []string{}
	for end := time.After(2 * time.Second); refused < dups+3 || len(other) < 1; {
		select {
		case m := <-lines:
			// 7.0, which the SDK reads as 7, is refused as no integer before (atk48b F4)
			if e := string(m["error"]); string(m["id"]) == "null" && strings.Contains(e, `"code":-32600`) && (strings.Contains(e, "in use") || strings.Contains(e, "not an integer")) {
				refused++
			} else {
				other = append(other, string(m["id"])+" "+string(m["result"])+string(m["error"]))
			}
		case <-end:
			t.Fatalf("while ids 7 and \"k\" were in use: %d of %d reuses refused at once, other answers %q", refused, dups+3, other)
		}
	}
	if len(other) != 1 || other[0] != `"7" {}` {
		t.Fatalf(`answers besides the refusals: %q; want the ping under id "7" (a string, not 7) answered`, other)
	}
	// the calls' answers, then id 7 reused once answered: an ordinary request
	got := map[string]bool{}
	for end := time.After(10 * time.Second); len(got) < 2; {
		select {
		case m := <-lines:
			got[string(m["id"])] = m["result"] != nil
		case <-end:
			t.Fatalf("the calls under ids 7 and \"k\" were not answered: %v", got)
		}
	}
	if !got["7"] || !got[`"k"`] {
		t.Fatalf("answers: %v; want results for 7 and \"k\"", got)
	}
	w(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"again"}}}`)
	select {
	case m := <-lines:
		if string(m["id"]) != "7" || !strings.Contains(string(m["result"]), "again") {
			t.Fatalf("id 7 reused after its answer: %s %s %s", m["id"], m["result"], m["error"])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("id 7 reused after its answer: no answer")
	}
	if n := ran(); n != 3 {
		t.Fatalf("%d calls ran; want 3 (the tools/call under id 7 in use did not run)", n)
	}
}

// The attack of atk45b F1 in process, with a 4 MiB bound, the client reading nothing in stage
// 2: first, for each pair, a call and a ping under one id and two calls under another (a stale
// non-call entry, a stale call entry); then a big call (about 9 MB of JSON, estimated 36 MiB)
// under the first id, and a ping under the second. The ping's answer, judged by the stale call
// entry, paid the big answer's estimate; the big answer, judged by the stale ping, went uncounted:
// every big call ran with nothing read (14 of 14, 335 MiB of heap). Refused at the transport, the
// reuses leave no entry: one big call runs, as without the pings (mutant stdio-id-in-use).
func TestStdioReusedIDPaysNoEstimate(t *testing.T) {
	const maxPer, pairs = 4 << 20, 6
	ex, in, outR := unreadStdio(t, maxPer)
	var paused atomic.Bool // the client reads nothing
	defer paused.Store(false)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			for paused.Load() {
				time.Sleep(10 * time.Millisecond)
			}
			if _, err := outR.Read(buf); err != nil {
				return
			}
		}
	}()
	w := func(s string, a ...any) { send(t, in, fmt.Sprintf(s, a...)) }
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	for i := range pairs {
		w(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"200ms"}}}`, 1000+i)
		w(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 1000+i)
		w(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"200ms"}}}`, 2000+i)
		w(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{}}}`, 2000+i)
	}
	for end := time.Now().Add(10 * time.Second); ran() < 2*pairs && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
	}
	time.Sleep(500 * time.Millisecond) // their small answers written and read
	base := ran()
	paused.Store(true) // from here on the client reads nothing
	for i := range pairs {
		w(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1048576}}}`, 1000+i)
		time.Sleep(400 * time.Millisecond) // its answer made, its estimate owed
		w(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, 2000+i)
	}
	time.Sleep(time.Second)
	n := ran() - base
	if n > 2 {
		t.Fatalf("%d of %d big calls ran with nothing read (at most 2): pings under reused ids paid their estimates", n, pairs)
	}
	t.Logf("%d of %d big calls ran with nothing read", n, pairs)
}

// The leak of atk45b F2: a ping under a running call's id left a stale non-call entry; the next
// call under that id, a big one, was judged by it, so its answer never paid its estimate (36 MiB
// owed forever against a 4 MiB bound), and the client's later calls waited though it had read
// every answer. Refused at the transport, the ping leaves no entry: the big answer pays its own
// estimate, and a fresh call runs (mutant stdio-id-in-use).
func TestStdioReusedIDLeavesNoDebt(t *testing.T) {
	ex, in, outR := unreadStdio(t, 4<<20)
	var read atomic.Int64
	go func() { // the client reads everything
		buf := make([]byte, 64<<10)
		for {
			n, err := outR.Read(buf)
			if err != nil {
				return
			}
			read.Add(int64(n))
		}
	}()
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	waitRan := func(n int, d time.Duration) bool {
		for end := time.Now().Add(d); ran() < n && time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		}
		return ran() >= n
	}
	send(t, in, `{"jsonrpc":"2.0","id":500,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"200ms"}}}`)
	send(t, in, `{"jsonrpc":"2.0","id":500,"method":"ping"}`)
	time.Sleep(time.Second) // the call answered
	send(t, in, `{"jsonrpc":"2.0","id":500,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1048576}}}`)
	if !waitRan(2, 5*time.Second) {
		t.Fatalf("the big call under id 500, once its first call was answered, did not run")
	}
	// until the client has read everything: the big answer (6 bytes of JSON a control byte)
	// and nothing more for half a second
	for end, last := time.Now().Add(60*time.Second), int64(-1); (read.Load() < 6<<20 || read.Load() != last) && time.Now().Before(end); time.Sleep(500 * time.Millisecond) {
		last = read.Load()
	}
	send(t, in, `{"jsonrpc":"2.0","id":501,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"fresh"}}}`)
	if !waitRan(3, 5*time.Second) {
		t.Fatalf("the client read every answer (%d MB), and a fresh call did not run in 5 s: the big answer's estimate is owed forever", read.Load()>>20)
	}
}

// Over HTTP a request under an id in flight on its session is refused by the SDK before its
// handler, -32600 on its own POST (streamable.go, "duplicate in-flight request ID"), so no
// answer is judged by another request's kind there: serve's HTTP counts hold each answer by the
// POST that carried its call, not by its id. This holds the SDK to it (atk45b); an id it would
// read as 7 (7.0) is refused by serve first, as no integer.
func TestHTTPReusedIDRefused(t *testing.T) {
	ex := &fakeExec{}
	url, _, _ := startHTTPPolicy(t, testPolicy(30*time.Second, 4), ex, HTTPOptions{Token: boundsToken})
	_, hdr := initializedSession(t, url)
	first := make(chan string, 1)
	go func() {
		_, b := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"1s"}}}`, hdr)
		first <- b
	}()
	time.Sleep(300 * time.Millisecond)
	for _, dup := range []string{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7.0,"method":"ping"}`} {
		// 7.0 is refused before the SDK sees it (an id it would answer as 7: atk48b F4)
		if code, b := post(t, url, dup, hdr); code != 400 || !strings.Contains(b, "-32600") || !strings.Contains(b, "duplicate") && !strings.Contains(b, "not an integer") {
			t.Fatalf("%s while id 7 is in flight: %d %.200s; want 400 and -32600", dup, code, b)
		}
	}
	if b := <-first; !strings.Contains(b, "exit_code") {
		t.Fatalf("the call under id 7: %.200s", b)
	}
	if code, b := post(t, url, `{"jsonrpc":"2.0","id":7,"method":"ping"}`, hdr); code != 200 || !strings.Contains(b, `"result"`) {
		t.Fatalf("id 7 reused after its answer: %d %.200s", code, b)
	}
}
