package serve

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A client that sends calls and never reads their answers gets no more calls run once
// MaxUnreadAnswers of answers wait for it: serve's memory holds a few answers, not one per call
// (64 read_file answers of 4 MiB of control bytes took serve to 1.5 GB and climbing). When the
// client reads, every call runs and is answered. Red with mutant unread-answers.
func TestStdioUnreadAnswersStopNewCalls(t *testing.T) {
	const maxPer = 4 << 20
	ex, in, outR := unreadStdio(t, maxPer)
	const calls, bulk = 16, 256 << 10 // each answer ~3 MB: the text and the structured result, 6 bytes a byte
	for i := range calls {
		send(t, in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":%d}}}`, 10+i, bulk))
	}
	var ran atomic.Int64
	ranNow := func() int64 { ex.mu.Lock(); defer ex.mu.Unlock(); return int64(len(ex.sessions)) }
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		ran.Store(ranNow())
	}
	n := ran.Load()
	// each answer is ~3 MB: a few fit under the bound, plus the calls already running (4 slots)
	limit := int64(maxPer/(3<<20)) + 1 + 4
	t.Logf("%d of %d calls ran while no answer was read (bound %d MiB: at most %d)", n, calls, maxPer>>20, limit)
	if n > limit {
		t.Fatalf("%d calls ran while their answers went unread: answers held in memory are unbounded", n)
	}
	// The client reads: every call is answered.
	got := 0
	buf := make([]byte, 1<<20)
	var line []byte
	for got < calls {
		k, err := outR.Read(buf)
		if err != nil {
			t.Fatalf("after %d answers: %v", got, err)
		}
		line = append(line, buf[:k]...)
		for {
			i := strings.IndexByte(string(line), '\n')
			if i < 0 {
				break
			}
			if strings.Contains(string(line[:min(i, 200)]), `"result"`) || strings.Contains(string(line[:i]), `"id":`) {
				got++
			}
			line = line[i+1:]
		}
	}
	if r := ranNow(); r != calls {
		t.Errorf("after reading, %d of %d calls ran", r, calls)
	}
}

// Calls that take the slots at once each count the answer the others may make: checked before
// running and counted only after, 4 calls of 250 MB answers passed at once (attack round
// atk25b, F4). Here each call's largest answer fills the client's bound, so while one runs
// (half a second) no other does, nor after it, its answer unread. Red without the reservation (mutant unread-unreserved: the 4
// slots' calls run at once).
func TestStdioRunningCallsReserveTheirAnswers(t *testing.T) {
	ex, in, _ := unreadStdio(t, 4<<20)
	for i := range 8 {
		send(t, in, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"bulk":262144,"sleep":"500ms"}}}`, 10+i))
	}
	ran := func() int { ex.mu.Lock(); defer ex.mu.Unlock(); return len(ex.sessions) }
	for end := time.Now().Add(20 * time.Second); ran() == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
	}
	// the first one's answer, once made, fills the bound too: no other runs after it either
	time.Sleep(time.Second)
	if n := ran(); n != 1 {
		t.Fatalf("%d calls ran at once while each may make an answer filling the client's bound, want 1", n)
	}
}

// unreadStdio is a serve over pipes with unread-answer bounds of maxPer a client: the client
// has read the initialize answer and reads nothing more until the test's end.
func unreadStdio(t *testing.T, maxPer int64) (*fakeExec, io.WriteCloser, io.Reader) {
	t.Helper()
	prev := unreadBounds
	unreadBounds = func() (int64, int64) { return maxPer, 4 * maxPer }
	inR, in := io.Pipe()
	outR, outW := io.Pipe()
	ex := &fakeExec{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, testPolicy(10*time.Minute, 4), ex, Options{Transport: &LineTransport{In: inR, Out: outW}})
	}()
	t.Cleanup(func() {
		go io.Copy(io.Discard, outR)
		cancel()
		in.Close()
		<-done
		unreadBounds = prev
	})
	var first [1]byte
	send(t, in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	// read the initialize answer only: from here on nothing is read
	for first[0] != '\n' {
		if _, err := outR.Read(first[:]); err != nil {
			t.Fatal(err)
		}
	}
	send(t, in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return ex, in, outR
}

// The bound for all is shared by session (attack round atk34, F3): at the bound, a session
// holding less than its share gets in by cutting the oldest answer of the one holding the most;
// one at or over its share waits, cuts nothing, and no session's own answers are cut for it.
func TestUnreadShareCutsTheLargestHolder(t *testing.T) {
	u := newUnread(64, 128)
	var cut []string
	hold := func(conn string, n int64) context.CancelFunc {
		ctx, cancel := context.WithCancel(context.Background())
		u.hold(conn, n, context.WithValue(ctx, cutKey{}, func() { cut = append(cut, conn) }), nil)
		return cancel
	}
	counted := func() int64 { u.mu.Lock(); defer u.mu.Unlock(); return u.all }
	hold("a", 50)
	hold("b", 50)
	hold("b", 10)
	end := hold("c", 40)
	if _, ok := u.reserve("a", 1); ok || len(cut) != 0 {
		t.Fatalf("a session over its share (128/3) got in at the bound, cutting %v", cut)
	}
	release, ok := u.reserve("d", 8)
	if !ok || len(cut) != 1 || cut[0] != "b" {
		t.Fatalf("a session holding nothing at the bound: admitted %v, cut %v; want admitted, b's oldest cut", ok, cut)
	}
	if n := counted(); n != 50+10+40+8 {
		t.Fatalf("counted %d after the cut, want the cut answer uncounted and the reservation counted", n)
	}
	release.End()
	end() // c's request over: uncounted, never cut
	for until := time.Now().Add(5 * time.Second); counted() != 50+10 && time.Now().Before(until); time.Sleep(time.Millisecond) {
	}
	if n := counted(); n != 50+10 || len(cut) != 1 {
		t.Fatalf("counted %d, cut %v: want c's answer uncounted by its request's end", n, cut)
	}
}

// A reservation is at most one session's bound, but an answer is counted whole when it is made:
// four calls admitted under the bound whose answers (48) pass their reservations (32) counted
// 192 against 128 and one reservation (TestHTTPUnreadAnswersSharedBySessions, red 1 time in 10,
// session 43's CI). Past that, the largest holder's oldest answer is cut. Red with mutant
// unread-hold-over.
func TestUnreadHoldPastItsReservation(t *testing.T) {
	u := newUnread(32, 128)
	var cut []string
	counted := func() int64 { u.mu.Lock(); defer u.mu.Unlock(); return u.all }
	var rsv []*reservation
	for _, c := range []string{"a", "b", "c", "d"} {
		r, ok := u.reserve(c, 32)
		if !ok {
			t.Fatalf("%s not admitted at %d", c, counted())
		}
		rsv = append(rsv, r)
	}
	for i, c := range []string{"a", "b", "c", "d"} {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		u.hold(c, 48, context.WithValue(ctx, cutKey{}, func() { cut = append(cut, c) }), rsv[i])
		if n := counted(); n > 128+32 {
			t.Fatalf("after %s's answer: counted %d, past the bound and one reservation (160)", c, n)
		}
	}
	if len(cut) == 0 {
		t.Fatal("no answer was cut, though four of 48 passed 160")
	}
}

// A call's answer is counted in the same step as its reservation ends, over stdio and HTTP: the
// two counted at once for a moment took what serve counts past the bound and one reservation,
// and a call of another session could wait for a count nothing held (TestHTTPUnreadAnswersSharedBySessions
// failed on a loaded machine at 160 MiB against 128 + 32). Red with mutant unread-answer-counted-twice.
func TestUnreadAnswerReplacesItsReservation(t *testing.T) {
	u := newUnread(64, 128)
	counted := func() int64 { u.mu.Lock(); defer u.mu.Unlock(); return u.all }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rsv, ok := u.reserve("a", 30)
	if !ok || counted() != 30 {
		t.Fatalf("reserved: %v, counted %d; want 30", ok, counted())
	}
	u.hold("a", 40, ctx, rsv)
	if n := counted(); n != 40 {
		t.Fatalf("HTTP: counted %d once the answer was held, want 40 (the reservation ended in the same step)", n)
	}
	u.open("s")
	rsv, _ = u.reserve("s", 20)
	u.owe("s", 5, rsv)
	if n := counted(); n != 45 {
		t.Fatalf("stdio: counted %d once the answer was owed, want 45", n)
	}
	rsv.End() // ended already: nothing more uncounted
	if n := counted(); n != 45 {
		t.Fatalf("a reservation ended twice uncounted %d", 45-n)
	}
}
