package serve

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// postHeader names, on a POST handed to the MCP handler, the request serve is serving it as
// (the SDK hands a call's handler the POST's header): set by serve, whatever the client sent.
const postHeader = "X-Mcpsandbox-Post"

// posts tracks the POST requests being served, so a call can tell whether the request that
// carries it (and would carry its answer) is still there. The MCP handler keeps a call going
// when its POST's connection closes, but without an event store the answer can never be
// delivered; and the bounds that hold while the POST is open (the connection, the body budget
// charged for its arguments) are given back when it ends. So a client could send calls and
// drop their connections at once: each call waited for a slot, its arguments held (4 MiB
// each), for up to limits.timeout, as many as it liked to send.
type posts struct {
	n    atomic.Uint64
	mu   sync.Mutex
	live map[string]context.Context
}

func newPosts() *posts { return &posts{live: map[string]context.Context{}} }

// track marks each POST while it is served.
func (p *posts) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		id := strconv.FormatUint(p.n.Add(1), 10)
		ctx, cancel := context.WithCancel(context.Background())
		p.mu.Lock()
		p.live[id] = ctx
		p.mu.Unlock()
		defer func() {
			p.mu.Lock()
			delete(p.live, id)
			p.mu.Unlock()
			cancel()
		}()
		r.Header.Set(postHeader, id)
		next.ServeHTTP(w, r)
	})
}

// gone is a context that ends when the POST whose header h is has been served (its client
// gone, or its answer written): nil when h names no POST serve is tracking (stdio, tests),
// an ended one when the POST is over already.
func (p *posts) gone(h http.Header) context.Context {
	if p == nil || h == nil {
		return nil
	}
	id := h.Get(postHeader)
	if id == "" {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ctx, ok := p.live[id]; ok {
		return ctx
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}
