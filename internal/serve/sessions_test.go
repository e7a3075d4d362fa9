package serve

import (
	"context"
	"slices"
	"testing"
	"time"
)

// Each server keeps its own sessions: two servers in one process (tests, the HTTP handler beside
// another) each track only theirs, and ending one server's session leaves the other's tracked,
// under the same id, and not ended.
func TestSessionsPerServer(t *testing.T) {
	fa, fb := &fakeExec{}, &fakeExec{}
	srvA, ra := newServer(testPolicy(5*time.Second, 4), fa, Options{})
	srvB, rb := newServer(testPolicy(5*time.Second, 4), fb, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	a, b := connectTo(t, ctx, srvA), connectTo(t, ctx, srvB)
	if _, err := call(t, ctx, a, map[string]any{"echo": "a"}); err != nil {
		t.Fatal(err)
	}
	if _, err := call(t, ctx, b, map[string]any{"echo": "b"}); err != nil {
		t.Fatal(err)
	}
	if na, nb := ra.sessions.len(), rb.sessions.len(); na != 1 || nb != 1 {
		t.Fatalf("server A tracks %d sessions, B %d: want 1 each (its own)", na, nb)
	}
	fa.mu.Lock()
	idA := fa.sessions[0]
	fa.mu.Unlock()
	fb.mu.Lock()
	idB := fb.sessions[0]
	fb.mu.Unlock()
	if idA == idB {
		t.Fatalf("both servers' sessions have the id %q", idA)
	}

	a.Close() // A's session ends: A's executor hears of it, and A forgets it
	waitFor(t, 10*time.Second, "server A's session ended and forgotten", func() bool {
		fa.mu.Lock()
		defer fa.mu.Unlock()
		return slices.Equal(fa.ended, []string{idA}) && ra.sessions.len() == 0
	})
	if n := rb.sessions.len(); n != 1 {
		t.Fatalf("server B tracks %d sessions after A's ended, want its 1", n)
	}
	if _, err := call(t, ctx, b, map[string]any{"echo": "b again"}); err != nil {
		t.Fatal(err)
	}
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.ended) != 0 || len(fb.sessions) != 2 || fb.sessions[1] != idB {
		t.Fatalf("server B after A's session ended: ended %q, call sessions %q (want none ended, both calls %q)", fb.ended, fb.sessions, idB)
	}
}
