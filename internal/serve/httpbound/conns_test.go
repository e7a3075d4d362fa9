package httpbound

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

type pipeConn struct {
	net.Conn
	closed bool
}

func (p *pipeConn) Close() error { p.closed = true; return p.Conn.Close() }

func newPipe() *pipeConn {
	a, _ := net.Pipe()
	return &pipeConn{Conn: a}
}

func auth(c *Conns, t *Conn) { Authenticated(c.ConnContext(context.Background(), t)) }

// Past the unauthenticated bound the oldest unauthenticated connection is closed; an
// authenticated one never is, and it does not count against that bound.
func TestConnsUnauthenticatedOldestEvicted(t *testing.T) {
	c := NewConns(8, 2)
	a := c.admit(newPipe())
	auth(c, a)
	p1, p2, p3 := newPipe(), newPipe(), newPipe()
	c.admit(p1)
	c.admit(p2)
	c.admit(p3)
	if !p1.closed || p2.closed || p3.closed || a.Conn.(*pipeConn).closed {
		t.Fatalf("closed: oldest %v, next %v, newest %v, authenticated %v", p1.closed, p2.closed, p3.closed, a.Conn.(*pipeConn).closed)
	}
	if all, unauth := c.Open(); all != 3 || unauth != 2 {
		t.Fatalf("open %d, unauthenticated %d; want 3, 2", all, unauth)
	}
	for range 100 {
		c.admit(newPipe())
	}
	if all, unauth := c.Open(); all != 3 || unauth != 2 || a.Conn.(*pipeConn).closed {
		t.Fatalf("after a flood: open %d, unauthenticated %d, authenticated closed %v", all, unauth, a.Conn.(*pipeConn).closed)
	}
	if c.Evicted.Load() != 101 {
		t.Fatalf("evicted %d, want 101", c.Evicted.Load())
	}
}

// At the total bound: the oldest idle authenticated connection makes room, a busy one never;
// with every connection busy a new one is refused.
func TestConnsTotalBound(t *testing.T) {
	c := NewConns(2, 1)
	a := c.admit(newPipe())
	auth(c, a)
	b := c.admit(newPipe())
	auth(c, b)
	c.ConnState(a, http.StateActive)
	c.ConnState(b, http.StateActive)
	p := newPipe()
	if c.admit(p) != nil || !p.closed || c.Refused.Load() != 1 {
		t.Fatal("a new connection was admitted past the bound with every connection busy")
	}
	c.ConnState(b, http.StateIdle)
	if n := c.admit(newPipe()); n == nil {
		t.Fatal("no room made by closing the idle connection")
	}
	if !b.Conn.(*pipeConn).closed || a.Conn.(*pipeConn).closed {
		t.Fatal("the wrong connection was closed to make room")
	}
	// Closing forgets; a closed connection's state change is harmless.
	a.Close()
	c.ConnState(a, http.StateClosed)
	if all, _ := c.Open(); all != 1 {
		t.Fatalf("open %d after a close, want 1", all)
	}
}

func TestSessionsReserve(t *testing.T) {
	s := NewSessions(2)
	r1, ok1 := s.Reserve()
	_, ok2 := s.Reserve()
	if _, ok := s.Reserve(); !ok1 || !ok2 || ok {
		t.Fatal("a third reservation past the bound of 2 was granted")
	}
	s.Add("x", nil) // the first request started its session
	end, _ := s.Begin("x", false)
	r1()
	r1() // twice is harmless
	if _, ok := s.Reserve(); ok {
		t.Fatal("granted with one busy live session and one reservation pending")
	}
	end()
	s.Remove("x")
	if _, ok := s.Reserve(); !ok {
		t.Fatal("not granted after the session ended")
	}
}

// clock is a settable time for Conns.now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time      { return c.t }
func (c *clock) add(d time.Duration) { c.t = c.t.Add(d) }
func fakeClock(c *Conns) *clock      { k := &clock{t: time.Unix(1e9, 0)}; c.now = k.now; return k }

// A connection that has sent bytes (a request on its way, not yet authenticated) outlives
// the ones that sent nothing, older or not, once those are older than SilentGrace (all
// younger than NewConnGrace); when every one has sent bytes the oldest goes.
func TestConnsSilentEvictedFirst(t *testing.T) {
	c := NewConns(8, 2)
	k := fakeClock(c)
	p1, p2 := newPipe(), newPipe()
	t1 := c.admit(p1)
	c.admit(p2)
	t1.heard.Store(true) // its request's head is being read
	k.add(SilentGrace)
	p3 := newPipe()
	t3 := c.admit(p3)
	if p1.closed || !p2.closed || p3.closed {
		t.Fatalf("closed: heard %v, silent %v, newest %v; the silent one should go", p1.closed, p2.closed, p3.closed)
	}
	t3.heard.Store(true)
	p4 := newPipe()
	c.admit(p4)
	if !p1.closed || p3.closed || p4.closed {
		t.Fatalf("all heard: the oldest should go (closed: %v %v %v)", p1.closed, p3.closed, p4.closed)
	}
}

// A connection that has sent nothing yet but was accepted less than SilentGrace ago (a token
// client's, its head not in yet) is not taken for a silent one: older connections that have
// sent a byte go first.
func TestConnsFreshSilentSpared(t *testing.T) {
	c := NewConns(8, 2)
	k := fakeClock(c)
	a := c.admit(newPipe())
	a.heard.Store(true) // a one-byte sender
	k.add(10 * time.Millisecond)
	fresh := newPipe()
	c.admit(fresh)
	k.add(10 * time.Millisecond)
	c.admit(newPipe())
	if fresh.closed || !a.Conn.(*pipeConn).closed {
		t.Fatalf("the fresh silent connection was closed (%v), not the older one-byte sender (%v)", fresh.closed, a.Conn.(*pipeConn).closed)
	}
}

// Past NewConnGrace the oldest unauthenticated connection goes whatever it has sent: a
// flood of one-byte senders held open cannot make a token client's fresh, silent connection
// the victim, even once that connection is older than SilentGrace.
func TestConnsGraceOldestFirst(t *testing.T) {
	c := NewConns(8, 2)
	k := fakeClock(c)
	a := c.admit(newPipe())
	a.heard.Store(true) // a one-byte sender, held
	k.add(NewConnGrace)
	fresh := newPipe()
	c.admit(fresh) // a token client's, its head not in yet
	k.add(SilentGrace)
	c.admit(newPipe())
	if fresh.closed || !a.Conn.(*pipeConn).closed {
		t.Fatalf("the fresh connection was closed (%v), not the one-byte sender older than the grace (%v)", fresh.closed, a.Conn.(*pipeConn).closed)
	}
}

// At the bound a new session takes the place of the least recently used idle one, which is
// closed and whose requests are then refused (Begin not ok); a session with a request or call
// in progress is never taken, one with only a GET stream open after every idle one; with
// every session busy the new one is refused.
func TestSessionsEvictIdle(t *testing.T) {
	s := NewSessions(3)
	closed := map[string]int{}
	for _, id := range []string{"a", "b", "c"} {
		s.Add(id, func() { closed[id]++ })
	}
	endA, _ := s.Begin("a", false) // a call running
	endC, _ := s.Begin("c", true)  // a GET stream open
	// b is idle: it goes, though a is older.
	if _, ok := s.Reserve(); !ok {
		t.Fatal("refused at the bound with an idle session open")
	}
	if closed["b"] != 1 || closed["a"] != 0 || closed["c"] != 0 || s.Evicted.Load() != 1 {
		t.Fatalf("closed %v; want b alone", closed)
	}
	if _, ok := s.Begin("b", false); ok {
		t.Fatal("an evicted session's request was let through")
	}
	s.Remove("b") // its end, as countSessions reports it
	s.Add("d", nil)
	endD, _ := s.Begin("d", false)
	// a busy, d busy, c with only its stream: c goes.
	if _, ok := s.Reserve(); !ok || closed["c"] != 1 || closed["a"] != 0 {
		t.Fatalf("with a stream-only session open: ok %v, closed %v; want c closed", ok, closed)
	}
	endC()
	s.Remove("c")
	s.Add("e", nil)
	endE, _ := s.Begin("e", false)
	if _, ok := s.Reserve(); ok || closed["a"] != 0 {
		t.Fatalf("every session busy: ok %v, closed %v; want refused", ok, closed)
	}
	endA()
	if _, ok := s.Reserve(); !ok || closed["a"] != 1 {
		t.Fatalf("a idle again: ok %v, closed %v; want a closed", ok, closed)
	}
	endD()
	endE()
}

// A connection whose head, read so far, carries the token is spared as an authenticated one is,
// before the guard has parsed it: a churn of connections without the token closed a token
// client's connection between its head's arrival and its parsing, one in five (attack round
// atk25b, F3). Without Vouch (the control) it is the first to go. Red with mutant
// http-vouch-off.
func TestConnsSparesAConnectionThatShowedTheToken(t *testing.T) {
	for _, vouch := range []bool{true, false} {
		c := NewConns(8, 2)
		if vouch {
			c.Vouch = func(h []byte) bool { return strings.Contains(string(h), "\r\nAuthorization: Bearer tok\r\n") }
		}
		a, b := net.Pipe()
		pc := &pipeConn{Conn: a}
		tok := c.admit(pc)
		go b.Write([]byte("POST /mcp HTTP/1.1\r\nAuthorization: Bearer tok\r\nContent-Length: 2\r\n"))
		buf := make([]byte, 128)
		if _, err := tok.Read(buf); err != nil { // the server reads the head; the guard has not parsed it yet
			t.Fatal(err)
		}
		later := time.Now().Add(time.Hour) // every connection past NewConnGrace
		c.now = func() time.Time { return later }
		for range 20 {
			c.admit(newPipe())
		}
		if pc.closed == vouch {
			t.Errorf("vouch %v: the connection that showed the token closed: %v", vouch, pc.closed)
		}
	}
}

// At the total bound, the connection whose request has waited longest for its body goes
// first, before an idle authenticated one, however short the wait; a busy one whose body is in,
// and the idle one while any request waits for its body, are spared (attack round atk25b, F2).
func TestConnsEvictAStalledBodyFirst(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewConns(4, 1)
	c.now = func() time.Time { return now }
	admitAuth := func() *Conn {
		n := c.admit(newPipe())
		if n == nil {
			t.Fatal("a new connection refused")
		}
		auth(c, n)
		c.ConnState(n, http.StateActive)
		return n
	}
	idle, late, early, busy := admitAuth(), admitAuth(), admitAuth(), admitAuth()
	c.ConnState(idle, http.StateIdle)
	early.bodyFrom.Store(now.UnixNano()) // accepted after late, waiting for its body longer
	now = now.Add(time.Millisecond)
	late.bodyFrom.Store(now.UnixNano())
	closed := func(n *Conn) bool { return n.Conn.(*pipeConn).closed }
	n5 := admitAuth()
	if !closed(early) || closed(late) || closed(idle) || closed(busy) {
		t.Fatalf("closed: waiting longest %v, waiting since later %v, idle %v, busy %v; want only the first", closed(early), closed(late), closed(idle), closed(busy))
	}
	// a request whose body was read (a new request, or none) no longer waits for one
	n5.bodyFrom.Store(now.Add(-time.Hour).UnixNano())
	c.ConnState(n5, http.StateIdle)
	c.ConnState(n5, http.StateActive)
	admitAuth()
	if !closed(late) || closed(idle) || closed(n5) {
		t.Fatal("the one still waiting for its body was not closed before the idle one")
	}
	if admitAuth(); !closed(idle) || closed(n5) {
		t.Fatal("with no body awaited, want the idle connection closed")
	}
	if c.admit(newPipe()) != nil {
		t.Fatal("a new connection admitted with every place busy and no body awaited")
	}
}

// The bound is shared by MCP session (atk39 F3): one session's requests in progress (calls
// waiting for a slot) fill the places; a newcomer takes the place of that session's newest
// request, before another client's idle keep-alive connection and when none is idle, and a
// session holding one connection keeps it. Red with mutant http-conn-share: the idle
// connection is closed, then every newcomer is refused.
func TestConnsSharedBySession(t *testing.T) {
	now := time.Unix(1000, 0)
	c := NewConns(8, 2)
	c.now = func() time.Time { return now }
	serving := func(id string) *Conn {
		n := c.admit(newPipe())
		if n == nil {
			t.Fatalf("a new connection was refused (session %q)", id)
		}
		auth(c, n)
		c.ConnState(n, http.StateActive)
		now = now.Add(time.Millisecond)
		Serving(c.ConnContext(context.Background(), n), id)
		return n
	}
	closed := func(n *Conn) bool { return n.Conn.(*pipeConn).closed }
	victim := serving("B")
	c.ConnState(victim, http.StateIdle) // another client's keep-alive connection, between requests
	other := serving("C")               // and a third session's call in progress
	var hog []*Conn
	for range 6 {
		hog = append(hog, serving("A"))
	}
	n := serving("")
	if closed(victim) || closed(other) || !closed(hog[5]) || closed(hog[4]) {
		t.Fatalf("closed: idle keep-alive of B %v, C's one request %v, A's newest %v, A's next %v; want A's newest alone",
			closed(victim), closed(other), closed(hog[5]), closed(hog[4]))
	}
	Serving(c.ConnContext(context.Background(), n), "B")
	c.ConnState(victim, http.StateActive)
	Serving(c.ConnContext(context.Background(), victim), "B")
	// every place busy, none idle: newcomers of four more sessions take A's places (5 down to
	// 1, its newest first), never C's one
	for _, id := range []string{"D", "E", "F", "G"} {
		serving(id)
	}
	if !closed(hog[4]) || !closed(hog[1]) || closed(hog[0]) || closed(other) {
		t.Fatalf("with every place busy, the session holding the most did not give way: A's %v %v %v, C's %v",
			closed(hog[4]), closed(hog[1]), closed(hog[0]), closed(other))
	}
	if got := c.Refused.Load(); got != 0 {
		t.Fatalf("%d newcomers refused while a session held more than one place", got)
	}
}
