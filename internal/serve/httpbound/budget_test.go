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
	small, ok := b.Charge(budgetReq(FreeBody, false), 4<<20, nil, "a")
	if !ok || b.Used() != 0 {
		t.Fatalf("a small body is free: ok=%v used %d", ok, b.Used())
	}
	// declared bodies far over the budget, none of their bytes read: nothing is charged
	var rels []func()
	for range 6 {
		rel, ok := b.Charge(budgetReq(4<<20, false), 4<<20, nil, "a")
		if !ok {
			t.Fatalf("a declared body was refused before a byte of it came (used %d of %d)", b.Used(), b.Max())
		}
		rels = append(rels, rel)
	}
	if b.Used() != 0 {
		t.Fatalf("declared, unsent bodies are charged %d: only what arrived may be", b.Used())
	}
	r := budgetReq(200<<10, false)
	rel, _ := b.Charge(r, 4<<20, nil, "b")
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

// A body that does not fit takes the charge of a body still being read, sent most of the way and
// held there, of the principal holding more than its share, and that body's connection is
// closed; bodies read to their end keep theirs (their calls are bounded elsewhere). Red with
// mutant http-body-evict-stalled (and http-body-budget: nothing is refused).
func TestBudgetStalledBodyGivesWay(t *testing.T) {
	const limit = 256 << 10 // a full body is charged held(limit+1-FreeBody), 768 KiB
	b := NewBudget(4 << 20)
	// five bodies of one client sent most of the way, then held: 3.6 MiB of the 4
	var heldReqs []*http.Request
	var rels []func()
	cut := 0
	for range 5 {
		r := budgetReq(limit, false)
		rel, _ := b.Charge(r, limit, func() { cut++ }, "session a")
		if _, err := io.CopyN(io.Discard, r.Body, limit-6<<10); err != nil {
			t.Fatalf("reading a held body within the budget: %v", err)
		}
		heldReqs, rels = append(heldReqs, r), append(rels, rel)
	}
	if want := int64(5 * HeldPerByte * (limit - 6<<10 - FreeBody)); b.Used() != want {
		t.Fatalf("charged %d for five bodies read most of the way, want %d", b.Used(), want)
	}
	// another client's body, arriving: it fits only if a held one gives way
	r := budgetReq(200<<10, true)
	rel, _ := b.Charge(r, limit, nil, "session v")
	if n, err := io.Copy(io.Discard, r.Body); err != nil || n != 200<<10 {
		t.Fatalf("a body that arrives, while another client held its bodies back, was refused: %d %v (used %d of %d)", n, err, b.Used(), b.Max())
	}
	if cut != 1 {
		t.Fatalf("%d held bodies' connections were closed for a 200 KiB body, want 1", cut)
	}
	if _, err := heldReqs[4].Body.Read(make([]byte, 10)); !errors.Is(err, errBodyEvicted) {
		t.Fatalf("the held body cut (its client's newest) read on after its charge was taken: %v", err)
	}
	for _, h := range heldReqs[:4] {
		if _, err := h.Body.Read(make([]byte, 10)); err != nil {
			t.Fatalf("an older held body was cut as well: %v", err)
		}
	}
	for _, f := range rels {
		f()
	}
	// bodies read to their end are not taken from, even of a client over its share: the next
	// one is refused
	var rels1 []func()
	for range 4 {
		r1 := budgetReq(limit, false)
		rel1, _ := b.Charge(r1, limit, nil, "session a")
		if _, err := io.Copy(io.Discard, r1.Body); err != nil {
			t.Fatal(err)
		}
		rels1 = append(rels1, rel1)
	}
	r2 := budgetReq(limit, true)
	rel2, _ := b.Charge(r2, limit, nil, "session w")
	if _, err := io.Copy(io.Discard, r2.Body); !errors.Is(err, ErrBodyBudget) {
		t.Fatalf("reading a body past the budget, the others read to their end: %v (used %d of %d)", err, b.Used(), b.Max())
	}
	rel2()
	for _, f := range rels1 {
		f()
	}
	rel()
	if b.Used() != 0 {
		t.Fatalf("%d bytes still charged after every request ended", b.Used())
	}
}

// atk39b F6: a client keeps its bodies fresh (a byte each of them every tick) and resends the
// one cut at once, fast; another client's body arrives at network pace (10 KiB a tick). The
// budget is shared by principal: the body that gives way is the newest of the principal over
// its share, the first client's, never the other's, however stale its last bytes. Red with
// mutants http-body-budget-by-session (every body its own principal: none is over its share,
// and the paced body is refused) and http-body-evict-newest-of-biggest (the stalest body
// gives way: the paced one).
func TestBudgetSharedByPrincipal(t *testing.T) {
	const limit = 256 << 10
	b := NewBudget(4 << 20)
	clock := time.Unix(1e9, 0)
	b.now = func() time.Time { return clock }
	var att []*http.Request
	var rels []func()
	cuts := 0
	defer func() {
		for _, f := range rels {
			f()
		}
	}()
	send := func(n int64) {
		r := budgetReq(limit, false)
		rel, _ := b.Charge(r, limit, func() { cuts++ }, "session attacker")
		att, rels = append(att, r), append(rels, rel)
		io.CopyN(io.Discard, r.Body, n) // cut or refused when it does not fit: it is sent again
	}
	for range 5 {
		send(limit - 6<<10)
	}
	v := budgetReq(200<<10, false)
	vcut := false
	relV, _ := b.Charge(v, limit, func() { vcut = true }, "session victim")
	defer relV()
	got := int64(0)
	for tick := 0; got < 200<<10; tick++ {
		clock = clock.Add(20 * time.Millisecond)
		for _, r := range att { // the attacker's bodies, fresh
			r.Body.Read(make([]byte, 1))
		}
		if b.Used() > b.Max() {
			t.Fatalf("tick %d: %d charged, over the budget of %d", tick, b.Used(), b.Max())
		}
		n, err := io.CopyN(io.Discard, v.Body, min(10<<10, 200<<10-got))
		got += n
		if err != nil || vcut {
			t.Fatalf("tick %d: the paced body (%d of %d bytes in) was cut or refused while another client kept its bodies fresh: %v (used %d of %d)",
				tick, got, 200<<10, err, b.Used(), b.Max())
		}
		if tick%3 == 0 {
			send(limit - 6<<10) // the attacker resends at once, fast
		}
	}
	if cuts == 0 {
		t.Fatal("no body of the client over its share was cut for the paced body's bytes")
	}
	t.Logf("paced body read whole; %d attacker bodies cut, %d begun", cuts, len(att))
}

// A body is its session's when the session is live, else its client's address (an IPv6 one
// by its /64): connections are not principals.
func TestBudgetPrincipal(t *testing.T) {
	r := budgetReq(1, false)
	r.RemoteAddr = "192.0.2.7:40000"
	if got := Principal(r, "abc"); got != "session abc" {
		t.Errorf("a live session's request: %q", got)
	}
	if got := Principal(r, ""); got != "address 192.0.2.7" {
		t.Errorf("a request without a session: %q", got)
	}
	r2 := budgetReq(1, false)
	r2.RemoteAddr = "192.0.2.7:40001"
	if Principal(r2, "") != Principal(r, "") {
		t.Error("two connections from one address are two principals")
	}
	r.RemoteAddr, r2.RemoteAddr = "[2001:db8:1:2:aaaa::1]:1", "[2001:db8:1:2:bbbb::9]:2"
	if a, b := Principal(r, ""), Principal(r2, ""); a != b || a != "address 2001:db8:1:2::/64" {
		t.Errorf("two addresses of one IPv6 /64: %q, %q", a, b)
	}
}
