package httpbound

import (
	"errors"
	"io"
	"net/http"
	"sync/atomic"
)

// Budget bounds the bytes of request bodies being read and decoded at once, server-wide: the
// per-request limit alone lets a hundred clients with the token each hold a 4 MiB body (and
// its decoded copy) at the same time. A body with a Content-Length is charged up front, so
// it is refused before a byte of it is read; a body without one (chunked) is charged as it is
// read. Everything is given back when the request is over. The first FreeBody bytes of each
// body are not charged: small requests (every ordinary call) always get in, and what they
// hold together is bounded by the connection bound.
type Budget struct {
	max  int64
	used atomic.Int64
}

// FreeBody is the part of each body the budget does not charge.
const FreeBody = 64 << 10

// ErrBodyBudget is the read error of a chunked body that would go over the budget.
var ErrBodyBudget = errors.New("serve is reading too many request bodies at once: try again shortly")

// NewBudget bounds the bytes of bodies in flight to max (at least 1).
func NewBudget(bytes int64) *Budget { return &Budget{max: max(bytes, 1)} }

// Max is the bound; Used the bytes charged now.
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
		n := max(min(r.ContentLength, limit+1)-FreeBody, 0)
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
	limit   int64
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
		k = min(k, c.limit-c.charged.Load())
		if k > 0 {
			if !c.b.take(k) {
				return 0, ErrBodyBudget
			}
			c.charged.Add(k)
		}
	}
	return n, err
}
