package serve

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// An answer is counted whole, from the answer made (answerSizeOf): one session sends calls
// whose answers carry workspace lists of 1000 long refused names (about 6 MB of JSON, past the
// session's 32 MiB once held) on connections it never reads. Once one answer is counted, the
// session's next calls wait: at most the calls the reservations let run at once, and one more,
// run. Counting the executor's result by the parts a rule named (stdout, stderr, files,
// pictures) left the lists out: a 9 MB answer counted 1 KiB, 41 of 40 calls ran, serve's heap
// 547 MiB (attack round atk44b F1; mutant unread-answer-from-result).
func TestHTTPUnreadAnswersCountTheWholeAnswer(t *testing.T) {
	ex := &fakeExec{}
	p := testPolicy(30*time.Second, 4)
	url, _, _ := startHTTPOptions(t, p, ex, Options{HTTP: &HTTPOptions{Token: boundsToken, WriteStall: time.Minute}})
	addr := hostAddr(url)
	sid, _ := initializedSession(t, url)
	const calls = 16
	for i := range calls {
		c := rawCall(t, addr, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"named":1000}}}`, 10+i))
		defer c.Close()
		_ = c.(*net.TCPConn).SetReadBuffer(4 << 10)
	}
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	time.Sleep(4 * time.Second)
	// 32 MiB over the default reservation (6.3 MiB: max_output_bytes 64 KiB) is 5 at once
	limit := 6
	n := ran()
	t.Logf("%d of %d calls ran on connections read by no one (at most %d)", n, calls, limit)
	if n > limit {
		t.Fatalf("%d calls ran while their answers (each about 6 MB of JSON) went unread: what they hold is not counted", n)
	}
	// another session's call is answered
	_, other := initializedSession(t, url)
	other["Authorization"] = "Bearer " + boundsToken
	if code, b := post(t, url, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"hi"}}}`, other); code != http.StatusOK || !strings.Contains(b, "hi") {
		t.Fatalf("another session's call: %d %.200s", code, b)
	}
}

// One answer past the bound for all and one client's bound by itself, on an idle serve, to a
// client that reads at once, is delivered: the answer just counted is not the one cut to make
// room for itself (attack round atk44b F2: cut before its first byte, every time, its call run
// and audited; mutant unread-hold-cuts-new). The bounds are lowered (4 MiB a client, 16 in all)
// so that a 12 MB answer is that answer.
func TestHTTPOneAnswerPastTheBoundAloneIsDelivered(t *testing.T) {
	prev := unreadBounds
	unreadBounds = func() (int64, int64) { return 4 << 20, 16 << 20 }
	t.Cleanup(func() { unreadBounds = prev })
	ex := &fakeExec{}
	p := testPolicy(30*time.Second, 4)
	p.Limits.MaxOutputBytes = policy.Size(1 << 20)
	url, _, _ := startHTTPPolicy(t, p, ex, HTTPOptions{Token: boundsToken, WriteStall: time.Minute})
	_, hdr := initializedSession(t, url)
	hdr["Authorization"] = "Bearer " + boundsToken
	resp, err := http.DefaultClient.Do(postRequest(url, `{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1000000}}}`, hdr))
	if err != nil {
		t.Fatalf("the call's answer (counted past 40 MiB, alone on the serve) was cut: %v", err)
	}
	defer resp.Body.Close()
	n, err := io.Copy(io.Discard, resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK || n < 8<<20 {
		t.Fatalf("the call's answer: status %d, %d bytes read, %v: cut, or not the answer", resp.StatusCode, n, err)
	}
}

// Over stdio an answer's debt is its own: a client reading slowly follows each big call (about
// 3 MB an answer, counted 12 MiB against a 4 MiB bound) with three calls of an unknown tool,
// answered at once by the SDK and owing nothing. A written answer paid the oldest debt, whoever
// owed it, so the cheap answers paid the big ones' before they were written: 24 of 24 ran
// unread, 164 MiB of heap (attack round atk44b F3). Each answer is counted at its exact size
// while it is written (unread.writing): the big answers made and not yet read stay a few, as
// without the cheap calls (mutant unread-paid-by-position).
func TestStdioCheapAnswersPayNoBigAnswersDebt(t *testing.T) {
	const maxPer = 4 << 20
	ex, in, outR := unreadStdio(t, maxPer)
	var read atomic.Int64
	go func() { // 64 KiB every 50 ms: 1.3 MB/s
		br := bufio.NewReaderSize(outR, 64<<10)
		buf := make([]byte, 64<<10)
		for {
			n, err := br.Read(buf)
			if err != nil {
				return
			}
			read.Add(int64(n))
			time.Sleep(50 * time.Millisecond)
		}
	}()
	const bigs = 20
	go func() {
		id := 100
		for range bigs {
			id++
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":262144}}}`+"\n", id)
			for range 3 {
				id++
				fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope","arguments":{}}}`+"\n", id)
			}
		}
	}()
	ran := func() int64 { ex.mu.Lock(); defer ex.mu.Unlock(); return int64(len(ex.sessions)) }
	var ahead int64
	for end := time.Now().Add(8 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		ahead = max(ahead, ran()-read.Load()/3_146_000) // big answers made and not yet read
	}
	// as TestStdioUnreadAnswersStopNewCalls: a few under the bound, and the 4 slots' calls
	limit := int64(maxPer/(3<<20)) + 1 + 4
	t.Logf("%d of %d big calls ran; %d MB read; at most %d big answers made and not yet read (at most %d)", ran(), bigs, read.Load()>>20, ahead, limit)
	if ahead > limit {
		t.Fatalf("%d big answers were made and not yet read: cheap answers paid their debts", ahead)
	}
}

// An answer that owed nothing pays no estimate: a client reading nothing sends each big call
// (about 12 MB an answer, counted 48 MiB against a 4 MiB bound: the SDK takes a while to encode it), then 30 ms later a call of an
// unknown tool, which the SDK answers with a JSON-RPC error at once. Its write paid the oldest
// estimate, the big answer's, while the SDK was still encoding that answer, and the next big
// call was let in: 5 to 8 ran (attack round atk44c F2; mutant unread-paid-oldest). The first
// big call's answer fills the bound: one runs, two if the second came while it ran.
func TestStdioErrorAnswersPayNoEstimate(t *testing.T) {
	const maxPer = 4 << 20
	ex, in, _ := unreadStdio(t, maxPer)
	go func() {
		id := 100
		for range 12 {
			id++
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":1048576}}}`+"\n", id)
			time.Sleep(30 * time.Millisecond)
			id++
			fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"nope","arguments":{}}}`+"\n", id)
			time.Sleep(30 * time.Millisecond)
		}
	}()
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	time.Sleep(5 * time.Second)
	if n := ran(); n > 2 {
		t.Fatalf("%d big calls ran with nothing read (at most 2): the unknown-tool answers paid their estimates", n)
	} else {
		t.Logf("%d big calls ran with nothing read", n)
	}
}
