package httpbound

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// Budget bounds what request bodies hold in serve at once, server-wide: the per-request limit
// alone lets a hundred clients with the token each hold a 4 MiB body (and its decoded copies)
// at the same time. A body is charged HeldPerByte times its bytes, what serve holds of a
// tools/call once it is decoded (its bytes, the SDK's message, the params, the schema
// validator's values, the tool's arguments), not only what is on the wire: charged its wire
// bytes, a 64 MiB budget let 250 to 500 MiB of calls be held. A body with a Content-Length is
// charged up front, so it is refused before a byte of it is read; a body without one
// (chunked) is charged as it is read. Everything is given back when the request is over. The
// first FreeBody bytes of each body are not charged: small requests (every ordinary call)
// always get in, and what they hold together is bounded by the connection bound.
type Budget struct {
	max  int64
	used atomic.Int64
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

// ErrBodyBudget is the read error of a chunked body that would go over the budget.
var ErrBodyBudget = errors.New("serve is reading too many request bodies at once: try again shortly")

// NewBudget bounds what the bodies in flight hold, as charged, to max bytes (at least 1).
func NewBudget(bytes int64) *Budget { return &Budget{max: max(bytes, 1)} }

// Max is the bound; Used what is charged now.
func (b *Budget) Max() int64  { return b.max }
func (b *Budget) Used() int64 { return b.used.Load() }

func (b *Budget) take(n int64) bool {
	for {
		u := b.used.Load()
		if u+n > b.max && u > 0 && !mutated("http-body-budget") {
			// (u > 0: a body alone as big as the budget still gets in.)
			return false
		}
		if b.used.CompareAndSwap(u, u+n) {
			return true
		}
	}
}

// Charge charges r's body: its Content-Length (at most limit, the per-request bound) now, or
// the bytes of a body without one as they are read (r.Body is wrapped). ok is false when a
// declared length does not fit: refuse the request without reading it. release must be
// called once the request is over.
func (b *Budget) Charge(r *http.Request, limit int64) (release func(), ok bool) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return func() {}, true
	}
	if r.ContentLength > 0 {
		n := held(max(min(r.ContentLength, limit+1)-FreeBody, 0))
		if n == 0 {
			return func() {}, true
		}
		if !b.take(n) {
			return nil, false
		}
		return func() { b.used.Add(-n) }, true
	}
	cb := &chargedBody{ReadCloser: r.Body, b: b, free: FreeBody, limit: limit + 1 - FreeBody}
	r.Body = cb
	return func() { b.used.Add(-cb.charged.Load()) }, true
}

// chargedBody charges the budget for each byte read, up to limit (past it the per-request
// bound refuses the body anyway).
type chargedBody struct {
	io.ReadCloser
	b       *Budget
	free    int64 // bytes still read free of charge
	limit   int64 // bytes charged at most (past them the per-request bound refuses the body)
	read    int64 // bytes charged so far
	charged atomic.Int64
}

func (c *chargedBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if n > 0 {
		k := int64(n)
		if c.free > 0 {
			f := min(k, c.free)
			c.free -= f
			k -= f
		}
		k = min(k, c.limit-c.read)
		if k > 0 {
			if !c.b.take(held(k)) {
				return 0, ErrBodyBudget
			}
			c.read += k
			c.charged.Add(held(k))
		}
	}
	return n, err
}
