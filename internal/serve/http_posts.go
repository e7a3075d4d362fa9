package serve

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
//
// And a call's message outlives its POST in the SDK's own queue too (decoded, validated, then
// handed to serve's handler, each in a goroutine of its own): a client that sent large calls
// faster than serve got through them and dropped each connection at once had them pile up
// there, past every bound (800 calls of 512 KiB: serve's heap at 410 MiB). So a POST carrying
// a tools/call whose client left is held (its connection counted, its body's budget charged)
// until the SDK is done with the call, at most hold: the bounds that hold while a client
// waits for its answer hold for the call still.
type posts struct {
	n       atomic.Uint64
	hold    time.Duration
	stop    <-chan struct{} // serve's shutdown, once the grace period is over: no POST is held past it
	mu      sync.Mutex
	live    map[string]context.Context
	handled map[string]chan struct{} // calls the SDK has not yet handled, by POST
}

func newPosts(hold time.Duration, stop <-chan struct{}) *posts {
	return &posts{hold: hold, stop: stop, live: map[string]context.Context{}, handled: map[string]chan struct{}{}}
}

// track marks each POST while it is served.
func (p *posts) track(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			next.ServeHTTP(w, r)
			return
		}
		id := strconv.FormatUint(p.n.Add(1), 10)
		ctx, cancel := context.WithCancel(context.Background())
		if cut := httpbound.Closer(r.Context()); cut != nil {
			ctx = context.WithValue(ctx, cutKey{}, cut) // the unread bound's fair share may cut its answer
		}
		rb, _ := r.Body.(*readBody)
		var handled chan struct{}
		p.mu.Lock()
		p.live[id] = ctx
		if rb != nil && rb.call {
			handled = make(chan struct{})
			p.handled[id] = handled
		}
		p.mu.Unlock()
		r.Header.Set(postHeader, id)
		next.ServeHTTP(w, r)
		p.mu.Lock()
		delete(p.live, id)
		p.mu.Unlock()
		cancel()
		if handled != nil && r.Context().Err() != nil && !mutated("atk19a-http-abandoned-hold") {
			// the client left before its answer: its call may still be in the SDK's queue
			t := time.NewTimer(p.hold)
			select {
			case <-handled:
			case <-t.C:
			case <-p.stop:
			}
			t.Stop()
		}
		p.mu.Lock()
		delete(p.handled, id)
		p.mu.Unlock()
	})
}

// handledBy tells track when the SDK is done with a tools/call (its handler, serve's
// middleware among it, has returned).
func (p *posts) handledBy(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/call" {
			if ex := req.GetExtra(); ex != nil && ex.Header != nil {
				defer p.done(ex.Header.Get(postHeader))
			}
		}
		return next(ctx, method, req)
	}
}

// pending is how many POSTs carrying a call the SDK has not yet handled are being served or held.
func (p *posts) pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.handled)
}

func (p *posts) done(id string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if ch, ok := p.handled[id]; ok {
		close(ch)
		delete(p.handled, id)
	}
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
