package serve

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connectTo connects one more in-memory client session to srv.
func connectTo(t *testing.T, ctx context.Context, srv *mcp.Server) *mcp.ClientSession {
	t.Helper()
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// One session flooding serve with long calls does not starve another: B's short call is
// answered at once although A has 12 calls of 3s queued for 4 slots (a FIFO would make B wait
// behind all of them, past its timeout).
func TestSlotsFairAcrossSessions(t *testing.T) {
	f := &fakeExec{}
	srv, r := newServer(testPolicy(6*time.Second, 4), f, Options{})
	r.slots.live = func() int { return 2 } // as over HTTP, with two sessions live
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := connectTo(t, ctx, srv), connectTo(t, ctx, srv)

	actx, stopA := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = call(t, actx, a, map[string]any{"sleep": "3s"})
		}()
	}
	defer func() { stopA(); wg.Wait() }()
	deadline := time.Now().Add(5 * time.Second)
	for f.running.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // A's other calls are queued by now
	runningA := f.running.Load()
	start := time.Now()
	res, err := call(t, ctx, b, map[string]any{"echo": "hi"})
	took := time.Since(start)
	if err != nil || res.IsError || !strings.Contains(text(res), "hi") {
		t.Fatalf("session B's call: %v %q", err, text(res))
	}
	if took > 2*time.Second { // A's calls take 3 s and the timeout is 6 s: unfair, B waits for them
		t.Fatalf("session B's call waited %s behind session A's flood; it should be answered at once", took)
	}
	if runningA != 3 {
		t.Fatalf("session A ran %d calls; with another session live it may take 3 of the 4 slots", runningA)
	}
	t.Logf("session B answered in %s while A had 12 calls of 3s queued for 4 slots", took)
}

// A single session (stdio) may use every slot.
func TestSlotsSingleSessionUsesAll(t *testing.T) {
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(5*time.Second, 4), f, nil)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := call(t, context.Background(), cs, map[string]any{"sleep": "300ms"}); err != nil || r.IsError {
				t.Errorf("call: %v", err)
			}
		}()
	}
	wg.Wait()
	if p := f.peak.Load(); p != 4 {
		t.Fatalf("peak concurrency %d; a single session may use all 4 slots", p)
	}
}

// The scheduler itself: fewest running first, FIFO among equals, the last slot kept for a
// session with nothing running when several are live, and a wait that ends gives up its place.
func TestSlotsOrder(t *testing.T) {
	s := newSlots(3)
	live := 2
	s.live = func() int { return live }
	ctx := context.Background()
	got := func(session string) func() {
		t.Helper()
		rel, err := s.acquire(ctx, session, time.Second)
		if err != nil {
			t.Fatalf("%s: %v", session, err)
		}
		return rel
	}
	a1, a2 := got("a"), got("a")
	// The last slot is not a's while another session is live...
	if _, err := s.acquire(ctx, "a", 50*time.Millisecond); err == nil || !strings.Contains(err.Error(), "limits.max_concurrent") {
		t.Fatalf("a took the last slot: %v", err)
	}
	b1 := got("b") // ...it is b's
	// Waiting: a (2 running) then c (0 running); a slot freed goes to c.
	order := make(chan string, 2)
	for _, sess := range []string{"a", "c"} {
		go func() {
			rel, err := s.acquire(ctx, sess, 5*time.Second)
			if err == nil {
				order <- sess
				rel()
			}
		}()
		time.Sleep(20 * time.Millisecond)
	}
	b1()
	if first := <-order; first != "c" {
		t.Fatalf("the freed slot went to %s; c had nothing running", first)
	}
	a1()
	a2()
	if second := <-order; second != "a" {
		t.Fatalf("then %s", second)
	}
	live = 1 // a single session may use every slot
	rels := []func(){got("a"), got("a"), got("a")}
	for _, r := range rels {
		r()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.free != 3 || len(s.running) != 0 || len(s.waiting) != 0 {
		t.Fatalf("slots leaked: free %d running %v waiting %d", s.free, s.running, len(s.waiting))
	}
}
