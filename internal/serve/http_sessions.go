package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIDHeader is the streamable HTTP transport's session header: a POST without it starts
// a session.
const sessionIDHeader = "Mcp-Session-Id"

// sessionTimeout is the idle expiry the MCP handler enforces: it closes a session no request
// has reached for d (a running call holds it open), and countSessions then ends its executor
// state.
func sessionTimeout(d time.Duration) time.Duration { return httpbound.IdleTimeout(d) }

// admitSessions bounds the live sessions (limits.max_sessions). A request that would start
// one (an initialize without a session id) reserves a place, held until the session is counted (countSessions); at the bound the
// least recently used idle session is closed to make room, and only when every session has a
// request or call in progress is the new one refused with 503. A request of a session closed
// to make room gets 404, so its client starts a new one (as after an idle expiry); every other
// request of a session marks it busy while it is served.
func admitSessions(s *httpbound.Sessions, b httpBounds, refusals *refusalLog, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get(sessionIDHeader); id != "" {
			end, ok := s.Begin(id, r.Method == http.MethodGet)
			if ok && s.Live(id) {
				httpbound.Serving(r.Context(), id) // the connection bound is shared by session
			}
			if !ok {
				http.Error(w, "session not found: it was closed to make room for a new one (limits.max_sessions), "+
					"as an idle session is after limits.session_idle: start a new session (initialize)", http.StatusNotFound)
				return
			}
			defer end()
			next.ServeHTTP(w, r)
			return
		}
		if r.Method != http.MethodPost || !startsSession(r) {
			next.ServeHTTP(w, r)
			return
		}
		release, ok := s.Reserve()
		if !ok {
			refusals.refused(r, http.StatusServiceUnavailable, "the live sessions are at limits.max_sessions")
			w.Header().Set("Retry-After", "60")
			http.Error(w, fmt.Sprintf("service unavailable: serve already holds %d live MCP sessions (limits.max_sessions); "+
				"a session ends when its client closes it or after %s without a request (limits.session_idle): "+
				"try again later, or raise limits.max_sessions in the policy", s.Max(), policy.Duration{Duration: b.sessionIdle}), http.StatusServiceUnavailable)
			return
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// countSessions counts each session from its initialize until it ends, however it ends
// (client DELETE, idle expiry, eviction to make room, shutdown), and then ends its executor
// state (sessionTable.end). Every other method marks its session busy while it runs (a call whose
// request is gone still holds its session), so the bound never evicts it.
func countSessions(ex executor.Executor, tracked *sessionTable, s *httpbound.Sessions) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ss, ok := req.GetSession().(*mcp.ServerSession)
			if !ok || ss == nil {
				return next(ctx, method, req)
			}
			if method != "initialize" {
				end, _ := s.Begin(ss.ID(), false) // ss.ID, not tracked.id: it would track an ended session again
				defer end()
				return next(ctx, method, req)
			}
			if st, first := tracked.track(ss); first {
				// Closed like an idle expiry (the MCP handler forgets it; its client's next
				// request gets 404), without waiting on the request that evicts it.
				s.Add(st.id, func() { go ss.Close() })
				go func() {
					_ = ss.Wait()
					tracked.end(ex, ss)
					s.Remove(st.id)
				}()
			}
			return next(ctx, method, req)
		}
	}
}

// boundLog logs the connection bounds at work, at most once a minute with counts, so a flood
// cannot fill the log.
type boundLog struct {
	log   *slog.Logger
	now   func() time.Time
	mu    sync.Mutex
	start time.Time
	n     map[string]int
	msg   string // said for the first in a window
}

func newBoundLog(log *slog.Logger, now func() time.Time) *boundLog {
	return &boundLog{log: log, now: now, n: map[string]int{},
		msg: "HTTP connection bound reached (limits.max_connections; at most a quarter without a valid token)"}
}

func (l *boundLog) hit(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= refusalWindow {
		// The first in a new window is said at once; the rest of the window is counted.
		l.flushLocked()
		l.start = now
		l.log.Warn(l.msg, "action", what)
		return
	}
	l.n[what]++
}

func (l *boundLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *boundLog) flushLocked() {
	for what, n := range l.n {
		l.log.Warn("HTTP bound at work", "action", what, "count", n, "since", l.start.UTC().Format(time.RFC3339))
	}
	clear(l.n)
}
