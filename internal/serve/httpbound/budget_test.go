package httpbound

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"testing"
	"time"
)

func budgetReq(n int, chunked bool) *http.Request {
	r, _ := http.NewRequest(http.MethodPost, "/", bytes.NewReader(make([]byte, n)))
	if chunked {
		r.ContentLength = -1
	}
	return r
}

// A body is charged as its bytes are read, never for the length it declares (atk39 F4: six
// connections declaring 4 MiB bodies and sending nothing held the whole budget). Red with
// mutant http-body-declared.
func TestBudgetChargesWhatArrived(t *testing.T) {
	b := NewBudget(1 << 20)
	small, ok := b.Charge(budgetReq(FreeBody, false), 4<<20, nil)
	if !ok || b.Used() != 0 {
		t.Fatalf("a small body is free: ok=%v used %d", ok, b.Used())
	}
	// declared bodies far over the budget, none of their bytes read: nothing is charged
	var rels []func()
	for range 6 {
		rel, ok := b.Charge(budgetReq(4<<20, false), 4<<20, nil)
		if !ok {
			t.Fatalf("a declared body was refused before a byte of it came (used %d of %d)", b.Used(), b.Max())
		}
		rels = append(rels, rel)
	}
	if b.Used() != 0 {
		t.Fatalf("declared, unsent bodies are charged %d: only what arrived may be", b.Used())
	}
	r := budgetReq(200<<10, false)
	rel, _ := b.Charge(r, 4<<20, nil)
	if n, err := io.Copy(io.Discard, r.Body); err != nil || n != 200<<10 {
		t.Fatalf("a body within the budget, others declared: %d %v", n, err)
	}
	if want := int64(HeldPerByte * (200<<10 - FreeBody)); b.Used() != want {
		t.Fatalf("a 200 KiB body is charged %d as read, want %d: %d times its bytes past the free part", b.Used(), want, HeldPerByte)
	}
	rel()
	for _, f := range rels {
		f()
	}
	small()
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged after every request ended", b.Used())
	}
}

// A body that does not fit takes the charge of the body still being read that has waited
// longest for its bytes, and that body's connection is closed; bodies read to their end keep
// theirs (their calls are bounded elsewhere). Red with mutant http-body-evict-stalled.
func TestBudgetStalledBodyGivesWay(t *testing.T) {
	b := NewBudget(1 << 20)
	clock := time.Unix(1e9, 0)
	b.now = func() time.Time { return clock }
	// a body sent most of the way, then held
	held := budgetReq(1<<20, false)
	cut := false
	relHeld, _ := b.Charge(held, 4<<20, func() { cut = true })
	if _, err := io.CopyN(io.Discard, held.Body, 300<<10); err != nil {
		t.Fatal(err)
	}
	charged := b.Used()
	if charged != HeldPerByte*(300<<10-FreeBody) {
		t.Fatalf("charged %d for 300 KiB read", charged)
	}
	clock = clock.Add(time.Second)
	// another client's body, arriving: it fits only if the held one gives way
	r := budgetReq(200<<10, true)
	rel, _ := b.Charge(r, 4<<20, nil)
	if n, err := io.Copy(io.Discard, r.Body); err != nil || n != 200<<10 {
		t.Fatalf("a body that arrives, while another held back its bytes, was refused: %d %v (used %d of %d)", n, err, b.Used(), b.Max())
	}
	if !cut {
		t.Fatal("the held body's connection was not closed when its charge was taken")
	}
	if _, err := held.Body.Read(make([]byte, 10)); !errors.Is(err, errBodyEvicted) {
		t.Fatalf("the held body read on after its charge was taken: %v", err)
	}
	relHeld()
	// a body read to its end is not taken from: the next one is refused
	clock = clock.Add(time.Second)
	r2 := budgetReq(300<<10, true)
	rel2, _ := b.Charge(r2, 4<<20, nil)
	if _, err := io.Copy(io.Discard, r2.Body); !errors.Is(err, ErrBodyBudget) {
		t.Fatalf("reading a body past the budget, the other read to its end: %v", err)
	}
	rel2()
	rel()
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged after every request ended", b.Used())
	}
}
