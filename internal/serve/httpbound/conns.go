// Package httpbound bounds what clients of serve's streamable HTTP front can hold: open
// connections (all of them, and those that have not yet shown a valid token) and live MCP
// sessions. It knows nothing of MCP or tokens: serve's guard says when a connection has
// authenticated and when a session starts and ends.
package httpbound

import (
	"bytes"
	"container/list"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// NewConnGrace is how long a just-accepted connection is spared when an unauthenticated one
// must be closed: the victim is the oldest unauthenticated connection older than this,
// whatever it has sent, so a flood of connections that send a byte at once (and hold it
// there) cannot make a token client's fresh connection, the only one that has not spoken
// yet, the one to go. Only when every unauthenticated connection is younger does the
// silent-first rule decide. A second is far more than a client needs to send its head on a
// connection it just opened, and far less than any flood's connection is held.
const NewConnGrace = time.Second

// SilentGrace is how long a connection that has sent nothing is spared by the rule that
// closes silent connections first (see evictUnauthLocked): longer than a client's first
// bytes take to arrive on a connection it just opened, on a loaded machine.
const SilentGrace = 50 * time.Millisecond

// With every connection place taken, the connection whose request has waited longest for its
// body goes first, before an idle authenticated one (attack round atk25b, F2: requests that sent
// their head and held their body back, re-opened when cut, kept every place and every other
// client out). No grace: a grace lets such a client, whose evicted connections come back at
// once, cycle them all under it, and then a new one took an idle client's keep-alive connection
// instead (seen in CI). A client's own body comes in milliseconds, so its request is the
// youngest of those waiting and the last to go.

// Conns bounds the connections of one listener. Every connection starts unauthenticated; the
// guard marks it authenticated once a request on it carries the token. At most maxUnauth
// unauthenticated connections are open at once: past that, the oldest is closed (sparing, while
// a flood churns faster than NewConnGrace, those that are newest or still within SilentGrace
// of their accept: see evictUnauthLocked), so a flood of idle or dripping connections only
// ever displaces itself. At most max connections are
// open in all: past that the oldest unauthenticated one is closed, else the one whose request
// has waited longest for its body, else the oldest idle authenticated one (a keep-alive
// connection with no request in flight), else the new connection is refused. Before an idle
// connection goes, and when none is idle, the bound is shared by MCP session (see
// evictShareLocked). The difference max-maxUnauth is headroom unauthenticated
// connections can never take, so a client with the token always gets in.
type Conns struct {
	max, maxUnauth int

	mu     sync.Mutex
	all    list.List // *Conn, oldest first
	unauth int

	// Evicted and Refused count connections closed by the bound (for logs and tests).
	Evicted, Refused atomic.Int64
	// OnBound, if set, is called (outside the lock) each time a connection is evicted or
	// refused, with what happened; serve rate-limits its log line.
	OnBound func(what string)
	// Vouch, if set, says whether the start of a connection's first request (its head, as far
	// as it has come) carries the token: such a connection is spared as an authenticated one
	// is, before the guard has parsed the head. Serve sets it when it has a token.
	Vouch func(head []byte) bool

	now func() time.Time // time.Now; tests move it
}

// NewConns bounds connections to max in all, maxUnauth of them unauthenticated
// (0 < maxUnauth <= max).
func NewConns(max, maxUnauth int) *Conns {
	if max < 1 {
		max = 1
	}
	if maxUnauth < 1 || maxUnauth > max {
		maxUnauth = max
	}
	return &Conns{max: max, maxUnauth: maxUnauth, now: time.Now}
}

// Limits returns the bounds in force (total, unauthenticated).
func (c *Conns) Limits() (max, maxUnauth int) { return c.max, c.maxUnauth }

// Open returns how many connections are open, and how many of them are unauthenticated.
func (c *Conns) Open() (all, unauth int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.all.Len(), c.unauth
}

// Conn is a connection tracked by Conns.
type Conn struct {
	net.Conn
	owner *Conns
	elem  *list.Element // nil once it left the list (closed or evicted); guarded by owner.mu
	auth  bool          // guarded by owner.mu
	idle  bool          // between requests (http.StateIdle); guarded by owner.mu
	heard atomic.Bool   // a byte has come in on it
	born  time.Time     // when it was accepted
	once  sync.Once
	// vouched: the bytes of its first request's head read so far carry the token (Vouch), so it
	// is spared as an authenticated one is, before the guard has parsed the head (attack round
	// atk25b, F3: under a churn of connections without the token, a token client's connection
	// was closed between its head's arrival and its parsing, one in five)
	vouched atomic.Bool
	// unvouched: its first request's whole head came without the token: never looked at again
	unvouched atomic.Bool
	head      []byte // what was read of it until vouched or maxVouchHead; its goroutine's only
	// bodyFrom is when its request began waiting for its body (UnixNano; 0: not waiting):
	// set by BodyDeadline, cleared when the body is read and between requests
	bodyFrom atomic.Int64
	// session is the MCP session its request in progress belongs to ("": none, or between
	// requests), and since when it serves it; guarded by owner.mu (see Serving)
	session string
	since   time.Time
}

// maxVouchHead bounds the bytes of a connection's first request Vouch looks at.
const maxVouchHead = 8 << 10

// Read notes the connection's first byte: one that has sent nothing is the first to go (on
// Unix, bytes that arrived and are not read yet count too: see hasInput).
func (t *Conn) Read(p []byte) (int, error) {
	n, err := t.Conn.Read(p)
	if n > 0 && !t.heard.Load() {
		t.heard.Store(true)
	}
	if n > 0 && t.owner.Vouch != nil && !t.vouched.Load() && !t.unvouched.Load() {
		t.head = append(t.head, p[:min(n, maxVouchHead-len(t.head))]...)
		switch {
		case t.owner.Vouch(t.head):
			t.vouched.Store(true)
			t.head = nil
		case len(t.head) >= maxVouchHead || bytes.Contains(t.head, headEnd):
			t.unvouched.Store(true)
			t.head = nil
		}
	}
	return n, err
}

// spared: o has shown the token in the bytes of its head, read or still waiting to be read.
func (c *Conns) spared(o *Conn) bool {
	if c.Vouch == nil || mutated("http-vouch-off") {
		return false
	}
	if o.vouched.Load() {
		return true
	}
	if o.unvouched.Load() || !o.heard.Load() && !hasInput(o.Conn) {
		return false
	}
	var buf [maxVouchHead]byte
	n := peekInput(o.Conn, buf[:])
	if n > 0 && c.Vouch(buf[:n]) {
		o.vouched.Store(true)
		return true
	}
	if n == len(buf) || bytes.Contains(buf[:n], headEnd) {
		o.unvouched.Store(true)
	}
	return false
}

var headEnd = []byte("\r\n\r\n")

// Close forgets the connection and closes it.
func (t *Conn) Close() error {
	t.owner.remove(t)
	var err error
	t.once.Do(func() { err = t.Conn.Close() })
	return err
}

// CloseWrite keeps net/http's graceful close (FIN, then a short wait) working through the wrapper.
func (t *Conn) CloseWrite() error {
	if cw, ok := t.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *Conns) remove(t *Conn) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(t)
}

func (c *Conns) removeLocked(t *Conn) {
	if t.elem == nil {
		return
	}
	c.all.Remove(t.elem)
	t.elem = nil
	if !t.auth {
		c.unauth--
	}
}

// admit tracks a new connection, evicting older ones as the bounds require; it returns nil
// (and has closed nc) when there is no room.
func (c *Conns) admit(nc net.Conn) *Conn {
	t := &Conn{Conn: nc, owner: c, born: c.now()}
	// victims and whether each had shown the token, read under the lock: the connection's
	// own goroutine sets auth (Authenticated) while this one accepts.
	var victims []*Conn
	var why []string // what each victim was, for OnBound
	c.mu.Lock()
	classes := !mutated("http-unauth-cap")
	for classes && c.unauth >= c.maxUnauth {
		v := c.evictUnauthLocked()
		if v == nil {
			break
		}
		victims, why = append(victims, v), append(why, victimWhy(v))
	}
	refused := false
	for c.all.Len() >= c.max {
		v, w := (*Conn)(nil), ""
		if classes {
			v = c.evictUnauthLocked()
		}
		if v == nil && !mutated("http-evict-stalled-body") {
			v = c.evictLongestWaitingLocked()
			w = "closed the connection whose request had waited longest for its body"
		}
		if v == nil && !mutated("http-conn-share") {
			// a session holding more than its share goes before an idle connection
			if v = c.evictShareLocked(true); v != nil {
				w = "closed the newest request of the session holding the most connections"
			}
		}
		if v == nil {
			v = c.evictLocked(func(o *Conn) bool { return o.auth && o.idle })
			w = ""
		}
		if v == nil && !mutated("http-conn-share") {
			if v = c.evictShareLocked(false); v != nil {
				w = "closed the newest request of the session holding the most connections"
			}
		}
		if v == nil {
			refused = true
			break
		}
		if w == "" {
			w = victimWhy(v)
		}
		victims, why = append(victims, v), append(why, w)
	}
	if !refused {
		t.elem = c.all.PushBack(t)
		c.unauth++
	}
	c.mu.Unlock()
	for i, v := range victims {
		c.Evicted.Add(1)
		v.once.Do(func() { v.Conn.Close() })
		if c.OnBound != nil {
			c.OnBound(why[i])
		}
	}
	if refused {
		c.Refused.Add(1)
		nc.Close()
		if c.OnBound != nil {
			c.OnBound("refused a new connection: every open connection is busy")
		}
		return nil
	}
	return t
}

// victimWhy is what an evicted connection was (read under the lock: the connection's own
// goroutine sets auth while admit runs).
func victimWhy(v *Conn) string {
	if v.auth {
		return "closed the oldest idle connection"
	}
	return "closed the oldest connection without a valid token"
}

// evictUnauthLocked picks the unauthenticated connection to close:
//   - the oldest older than NewConnGrace, whatever it has sent;
//   - else (every one is younger: a fast churn) the oldest that has sent nothing for
//     SilentGrace since it was accepted: a churn of idle connections displaces itself, and a
//     client with the token whose request is on its way (its connection is unauthenticated
//     until the request's head is parsed) is not closed while such a connection is open;
//   - else the oldest: a token client's fresh connection, the newest, goes last.
//
// A connection that has sent nothing is spared for SilentGrace, not evicted first at once:
// under a churn of connections that each send a byte at once, a token client's connection,
// just accepted, is the only silent one for the moment its first bytes take to arrive.
func (c *Conns) evictUnauthLocked() *Conn {
	now := c.now()
	grace := !mutated("http-conn-grace")
	if grace {
		if e := c.oldestUnauthLocked(); e != nil && now.Sub(e.born) >= NewConnGrace {
			c.removeLocked(e)
			return e
		}
	}
	if !mutated("http-evict-silent") {
		silent := func(o *Conn) bool {
			if o.auth || o.heard.Load() || grace && now.Sub(o.born) < SilentGrace || o.vouched.Load() {
				return false
			}
			if hasInput(o.Conn) { // its bytes are in, not yet read
				o.heard.Store(true)
				return false
			}
			return true
		}
		if v := c.evictLocked(silent); v != nil {
			return v
		}
	}
	return c.evictLocked(func(o *Conn) bool { return !o.auth && !c.spared(o) })
}

// oldestUnauthLocked is the oldest unauthenticated connection (nil if none) that has not shown
// the token (spared); the list is in the order connections were accepted.
func (c *Conns) oldestUnauthLocked() *Conn {
	for e := c.all.Front(); e != nil; e = e.Next() {
		if o := e.Value.(*Conn); !o.auth && !c.spared(o) {
			return o
		}
	}
	return nil
}

// evictLongestWaitingLocked takes out of the list the connection whose request has waited
// longest for its body (nil if none waits).
func (c *Conns) evictLongestWaitingLocked() *Conn {
	var v *Conn
	var since int64
	for e := c.all.Front(); e != nil; e = e.Next() {
		o := e.Value.(*Conn)
		if f := o.bodyFrom.Load(); f != 0 && (v == nil || f < since) {
			v, since = o, f
		}
	}
	if v != nil {
		c.removeLocked(v)
	}
	return v
}

// evictShareLocked shares the connection bound by MCP session, as the unread-answer bound is
// (attack round atk39, F3: one client's session filled every place with complete tools/call
// POSTs waiting for a slot, which no other rule evicts, and every other client's connections
// were reset). The victim is the newest request of the session holding the most connections
// with a request in progress (its newest is the likeliest to be still waiting for a slot; its
// call is refused, rule serve.request_gone, when its POST goes): with over, only when that
// session holds more than its share, the places over the sessions holding any plus the
// newcomer's; else when it holds more than one. The token is one for all clients, so the
// session is the only principal serve can tell apart: a client with many sessions gets a share
// per session (they are bounded by limits.max_sessions).
func (c *Conns) evictShareLocked(over bool) *Conn {
	held := map[string]int{}
	for e := c.all.Front(); e != nil; e = e.Next() {
		if o := e.Value.(*Conn); o.session != "" && !o.idle {
			held[o.session]++
		}
	}
	top, most := "", 0
	for id, n := range held {
		if n > most || n == most && id < top {
			top, most = id, n
		}
	}
	if most <= 1 || over && most <= c.max/(len(held)+1) {
		return nil
	}
	var v *Conn
	for e := c.all.Front(); e != nil; e = e.Next() {
		if o := e.Value.(*Conn); o.session == top && !o.idle && (v == nil || !o.since.Before(v.since)) {
			v = o
		}
	}
	c.removeLocked(v)
	return v
}

// Serving marks the connection a request with ctx came on as serving a request of MCP session
// id (until the request is over): the connection bound is shared by session.
func Serving(ctx context.Context, id string) {
	t, ok := ctx.Value(connKey{}).(*Conn)
	if !ok {
		return
	}
	c := t.owner
	c.mu.Lock()
	defer c.mu.Unlock()
	t.session, t.since = id, c.now()
}

// evictLocked takes the oldest connection that matches out of the list (nil if none).
func (c *Conns) evictLocked(match func(*Conn) bool) *Conn {
	for e := c.all.Front(); e != nil; e = e.Next() {
		if o := e.Value.(*Conn); match(o) {
			c.removeLocked(o)
			return o
		}
	}
	return nil
}

// Listener wraps ln so every accepted connection is admitted by c first.
func (c *Conns) Listener(ln net.Listener) net.Listener { return &listener{Listener: ln, c: c} }

type listener struct {
	net.Listener
	c *Conns
}

func (l *listener) Accept() (net.Conn, error) {
	for {
		nc, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if t := l.c.admit(nc); t != nil {
			return t, nil
		}
	}
}

// ConnState is for http.Server.ConnState: it tells idle keep-alive connections from busy ones.
func (c *Conns) ConnState(nc net.Conn, s http.ConnState) {
	t, ok := nc.(*Conn)
	if !ok {
		return
	}
	switch s {
	case http.StateIdle, http.StateActive:
		t.bodyFrom.Store(0) // a new request, or none: no body awaited yet
		c.mu.Lock()
		t.idle = s == http.StateIdle
		t.session = "" // a new request, or none: Serving says whose it is
		c.mu.Unlock()
	case http.StateClosed, http.StateHijacked:
		c.remove(t)
	}
}

type connKey struct{}

// ConnContext is for http.Server.ConnContext: it lets Authenticated find the connection.
func (c *Conns) ConnContext(ctx context.Context, nc net.Conn) context.Context {
	if t, ok := nc.(*Conn); ok {
		return context.WithValue(ctx, connKey{}, t)
	}
	return ctx
}

// Closer is a func closing the connection a request with ctx came on (nil for one not
// tracked): a blocked write on it ends at once.
func Closer(ctx context.Context) func() {
	t, ok := ctx.Value(connKey{}).(*Conn)
	if !ok {
		return nil
	}
	return func() { _ = t.Close() }
}

// Authenticated marks the connection a request came on as having shown a valid token: it
// leaves the unauthenticated class for good.
func Authenticated(ctx context.Context) {
	t, ok := ctx.Value(connKey{}).(*Conn)
	if !ok {
		return
	}
	c := t.owner
	c.mu.Lock()
	defer c.mu.Unlock()
	if !t.auth && t.elem != nil {
		c.unauth--
	}
	t.auth = true
}
