package httpbound

import (
	"errors"
	"io"
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
// 503). And a body that does not fit takes the charge of the body still being read that has
// waited longest for its bytes (its connection is closed): bodies sent most of the way and
// held there cannot keep the budget either, whereas a client's own body, arriving, is the
// freshest of those being read.
type Budget struct {
	max int64

	mu      sync.Mutex
	used    int64
	reading map[*chargedBody]struct{} // bodies charged and not read to their end

	now func() time.Time // time.Now; tests move it
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
var errBodyEvicted = errors.New("the request body waited too long for its bytes while others needed the room: send it again")

// NewBudget bounds what the bodies in flight hold, as charged, to max bytes (at least 1).
func NewBudget(bytes int64) *Budget {
	return &Budget{max: max(bytes, 1), reading: map[*chargedBody]struct{}{}, now: time.Now}
}

// Max is the bound; Used what is charged now.
func (b *Budget) Max() int64 { return b.max }
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Charge charges r's body as it is read (r.Body is wrapped), at most limit bytes (the
// per-request bound refuses the rest). closer, if not nil, closes the request's connection:
// the body's charge may be taken by another's (see Budget). ok is always true (the declared
// length is checked against the per-request bound only, by the reader). release must be
// called once the request is over.
func (b *Budget) Charge(r *http.Request, limit int64, closer func()) (release func(), ok bool) {
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
	cb := &chargedBody{ReadCloser: r.Body, b: b, free: FreeBody, limit: limit + 1 - FreeBody, closer: closer, last: b.now()}
	r.Body = cb
	b.mu.Lock()
	b.reading[cb] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			delete(b.reading, cb)
			b.used -= cb.charged
			cb.charged = 0
			cb.over = true
		})
	}, true
}

// chargedBody charges the budget for each byte read, up to limit (past it the per-request
// bound refuses the body anyway).
type chargedBody struct {
	io.ReadCloser
	b      *Budget
	closer func()
	free   int64 // bytes still read free of charge
	limit  int64 // bytes charged at most (past them the per-request bound refuses the body)
	read   int64 // bytes charged so far

	// guarded by b.mu
	charged int64
	last    time.Time // when its last bytes came (or it began)
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

// take charges n more to c, which just got bytes; when they do not fit, the body still being
// read whose last bytes came longest ago (before c's) gives its charge up and is cut.
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
			for o := range b.reading {
				if o != c && o.charged > 0 && o.last.Before(now) && (v == nil || o.last.Before(v.last)) {
					v = o
				}
			}
		}
		if v == nil {
			return false
		}
		delete(b.reading, v)
		b.used -= v.charged
		v.charged, v.evicted = 0, true
		if v.closer != nil {
			cut = append(cut, v.closer)
		}
	}
	if c.over {
		return false
	}
	b.used += n
	c.charged += n
	c.last = now
	return true
}
