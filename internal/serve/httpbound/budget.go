package httpbound

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Budget bounds what request bodies hold in serve at once, server-wide: the per-request limit
// alone lets a hundred clients with the token each hold a 4 MiB body (and its decoded copies)
// at the same time. A body is charged HeldPerByte times its bytes, what serve holds of a
// tools/call once it is decoded (its bytes, the SDK's message, the params, the schema
// validator's values, the tool's arguments), not only what is on the wire: charged its wire
// bytes, a 64 MiB budget let 250 to 500 MiB of calls be held. The first FreeBody bytes of each
// body are not charged: small requests (every ordinary call) always get in, and what they
// hold together is bounded by the connection bound. Everything is given back when the
// request is over.
//
// A body is charged as its bytes arrive, never for the length it declares (atk39 F4: charged
// its Content-Length up front, six connections declaring 4 MiB bodies and sending none of them
// held the whole budget for the body timeout, and every other client's call over 64 KiB got
// 503).
//
// The budget is shared by principal (see Principal): the MCP session a body is for, else its
// client's address. A body that does not fit takes the charge of the newest body still being
// read of the principal holding the most over its share (its connection is closed); the share
// is the budget over the principals holding any, the taker's among them, and never less than
// one full body. When that newest body is the taker itself, or no principal is over its share,
// the taker is refused (503). So bodies sent most of the way and held there cannot keep the
// budget from another principal, and which body gives way is never chosen by a recency its
// sender controls (atk39b F6: "the body that has waited longest for its bytes gives way" let a
// client keep its own bodies fresh with a byte every 2 ms, and a remote client's body, arriving
// at network pace, was always the stalest and was cut, 6 tries of 6). A client with many
// sessions gets a share per session (they are bounded by limits.max_sessions).
type Budget struct {
	max int64

	mu      sync.Mutex
	used    int64
	reading map[*chargedBody]struct{} // bodies charged and not read to their end
	held    map[string]int64          // what each principal's bodies are charged (none: no entry)
	seq     uint64                    // bodies begun so far: their order

	now func() time.Time // time.Now; tests move it (only the mutant's stalest-body rule uses it)
}

// FreeBody is the part of each body the budget does not charge.
const FreeBody = 64 << 10

// HeldPerByte is what serve holds of a decoded tools/call per byte of its body: measured at 4.1
// (TestHTTPAbandonedCallsStayCounted: 18 calls of 512 KiB in the SDK's hands, heap +37 MiB).
const HeldPerByte = 4

// held is what a body's n charged bytes hold once decoded.
func held(n int64) int64 {
	if mutated("http-body-held") {
		return n
	}
	return n * HeldPerByte
}

// ErrBodyBudget is the read error of a body that would go over the budget.
var ErrBodyBudget = errors.New("serve is reading too many request bodies at once: try again shortly")

// errBodyEvicted is the read error of a body whose charge another body took.
var errBodyEvicted = errors.New("the request body was cut: its client holds more of serve's request-body budget than its share while others need the room: send it again")

// NewBudget bounds what the bodies in flight hold, as charged, to max bytes (at least 1).
func NewBudget(bytes int64) *Budget {
	return &Budget{max: max(bytes, 1), reading: map[*chargedBody]struct{}{}, held: map[string]int64{}, now: time.Now}
}

// Max is the bound; Used what is charged now.
func (b *Budget) Max() int64 { return b.max }
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Charge charges r's body as it is read (r.Body is wrapped), at most limit bytes (the
// per-request bound refuses the rest), to principal (Principal's key). closer, if not nil,
// closes the request's connection: the body's charge may be taken by another's (see Budget).
// ok is always true (the declared length is checked against the per-request bound only, by
// the reader). release must be called once the request is over.
func (b *Budget) Charge(r *http.Request, limit int64, closer func(), principal string) (release func(), ok bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return func() {}, true
	}
	if r.ContentLength > 0 && mutated("http-body-declared") {
		// the old way: the declared length charged up front, first come
		n := held(max(min(r.ContentLength, limit+1)-FreeBody, 0))
		b.mu.Lock()
		defer b.mu.Unlock()
		if n > 0 && b.used+n > b.max && b.used > 0 {
			return nil, false
		}
		b.used += n
		return func() { b.mu.Lock(); b.used -= n; b.mu.Unlock() }, true
	}
	cb := &chargedBody{ReadCloser: r.Body, b: b, free: FreeBody, limit: limit + 1 - FreeBody, closer: closer, owner: principal}
	r.Body = cb
	b.mu.Lock()
	b.seq++
	cb.seq, cb.last = b.seq, b.now()
	if mutated("http-body-budget-by-session") {
		cb.owner = fmt.Sprintf("body %d", cb.seq) // every body a principal of its own
	}
	b.reading[cb] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.reading, cb)
			b.chargeLocked(cb, -cb.charged)
			cb.over = true
		})
	}, true
}

// chargeLocked charges c n more (n < 0: gives back), and its principal with it.
func (b *Budget) chargeLocked(c *chargedBody, n int64) {
	b.used += n
	c.charged += n
	if h := b.held[c.owner] + n; h > 0 {
		b.held[c.owner] = h
	} else {
		delete(b.held, c.owner)
	}
}

// Principal is whose a request's body is, for sharing the budget: "session ID" when session
// is the live MCP session the request names (the caller checks it is live: a made-up id
// would be a share of its own), else its client's address. Requests with no session yet are
// shared by address, not by connection: connections are free to open (up to the connection
// bound), each would be a principal holding one body, within its share (at least one full
// body), and a few would fill the budget beyond any eviction. An IPv6 address counts by its
// /64, what one host is usually given. Clients behind one address (loopback, a proxy) share
// one principal for their requests without a session; those are initializes, within the
// free part of a body, and requests for a session that is gone (answered 404).
func Principal(r *http.Request, session string) string {
	if session != "" {
		return "session " + session
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		return "address " + ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return "address " + host
}

// chargedBody charges the budget for each byte read, up to limit (past it the per-request
// bound refuses the body anyway).
type chargedBody struct {
	io.ReadCloser
	b      *Budget
	closer func()
	free   int64  // bytes still read free of charge
	limit  int64  // bytes charged at most (past them the per-request bound refuses the body)
	read   int64  // bytes charged so far
	owner  string // its principal (Principal)

	// guarded by b.mu
	seq     uint64 // its order among the bodies begun
	charged int64
	last    time.Time // when its last bytes came (or it began): only the mutant's rule reads it
	evicted bool      // its charge was taken by another body
	over    bool      // released
}

func (c *chargedBody) Read(p []byte) (int, error) {
	if c.gone() {
		return 0, errBodyEvicted
	}
	n, err := c.ReadCloser.Read(p)
	if n <= 0 {
		if err != nil {
			c.b.doneReading(c)
		}
		return n, err
	}
	k := int64(n)
	if c.free > 0 {
		f := min(k, c.free)
		c.free -= f
		k -= f
	}
	k = min(k, c.limit-c.read)
	if !c.b.take(c, held(max(k, 0))) {
		return 0, ErrBodyBudget
	}
	c.read += max(k, 0)
	if err != nil {
		c.b.doneReading(c)
	}
	return n, err
}

func (c *chargedBody) gone() bool {
	c.b.mu.Lock()
	defer c.b.mu.Unlock()
	return c.evicted
}

// doneReading: c's body is read to its end (or failed); its charge stays until release, but
// it no longer waits for bytes, so no other body takes it.
func (b *Budget) doneReading(c *chargedBody) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.reading, c)
}

// take charges n more to c, which just got bytes; when they do not fit, the newest body still
// being read of the principal holding the most over its share gives its charge up and is cut
// (see Budget); false when that body is c, or no principal is over its share.
func (b *Budget) take(c *chargedBody, n int64) bool {
	var cut []func()
	defer func() {
		for _, f := range cut {
			f()
		}
	}()
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	for b.used+n > b.max && b.used > 0 && !mutated("http-body-budget") {
		// (b.used > 0: a body alone as big as the budget still gets in.)
		var v *chargedBody
		if !mutated("http-body-evict-stalled") {
			if mutated("http-body-evict-newest-of-biggest") {
				v = b.stalestLocked(c, now)
			} else {
				v = b.victimLocked(c, n)
			}
		}
		if v == nil || v == c {
			return false
		}
		delete(b.reading, v)
		b.chargeLocked(v, -v.charged)
		v.evicted = true
		if v.closer != nil {
			cut = append(cut, v.closer)
		}
	}
	if c.over {
		return false
	}
	b.chargeLocked(c, n)
	c.last = now
	return true
}

// victimLocked is the body that gives way for c's n more: the newest still being read (c
// among them) of the principal holding the most over its share, counting c's n to c's; nil
// when no principal over its share has such a body. The share is the budget over the
// principals holding any, c's among them, and at least one full body (held(c.limit)), so a
// client alone may fill the budget, and a principal holding a single body never gives it up.
func (b *Budget) victimLocked(c *chargedBody, n int64) *chargedBody {
	k := int64(len(b.held))
	if b.held[c.owner] == 0 {
		k++
	}
	share := max(b.max/k, held(c.limit))
	newest := map[string]*chargedBody{c.owner: c}
	for o := range b.reading {
		if o.charged > 0 && (newest[o.owner] == nil || o.seq > newest[o.owner].seq) {
			newest[o.owner] = o
		}
	}
	top, most := "", share
	for p := range newest {
		h := b.held[p]
		if p == c.owner {
			h += n
		}
		if h > most || h == most && top != "" && p < top {
			top, most = p, h
		}
	}
	if top == "" {
		return nil
	}
	return newest[top]
}

// stalestLocked is the old rule (mutant http-body-evict-newest-of-biggest): the body still
// being read whose last bytes came longest ago, before now. Its sender keeps its own bodies
// fresh with a byte every few ms, and another client's body at network pace is the stalest.
func (b *Budget) stalestLocked(c *chargedBody, now time.Time) *chargedBody {
	var v *chargedBody
	for o := range b.reading {
		if o != c && o.charged > 0 && o.last.Before(now) && (v == nil || o.last.Before(v.last)) {
			v = o
		}
	}
	return v
}
