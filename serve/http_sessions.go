package serve

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve/httpbound"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionIDHeader is the streamable HTTP transport's session header: a POST without it starts
// a session.
const sessionIDHeader = "Mcp-Session-Id"

// sessionTimeout is the idle expiry the MCP handler enforces: it closes a session no request
// has reached for d (a running call holds it open), and countSessions then ends its executor
// state.
func sessionTimeout(d time.Duration) time.Duration { return httpbound.IdleTimeout(d) }

// admitSessions refuses, with 503, a request that would start a session once limits.max_sessions
// are live; the place it reserves is held until the session is counted (countSessions).
func admitSessions(s *httpbound.Sessions, b httpBounds, refusals *refusalLog, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get(sessionIDHeader) != "" {
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
// (client DELETE, idle expiry, shutdown), and then ends its executor state (EndSession).
func countSessions(ex executor.Executor, s *httpbound.Sessions) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if ss, ok := req.GetSession().(*mcp.ServerSession); ok && ss != nil && method == "initialize" {
				if st, first := track(ss); first {
					s.Add(st.id)
					go func() {
						_ = ss.Wait()
						EndSession(ex, ss)
						s.Remove(st.id)
					}()
				}
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
}

func newBoundLog(log *slog.Logger, now func() time.Time) *boundLog {
	return &boundLog{log: log, now: now, n: map[string]int{}}
}

func (l *boundLog) hit(what string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= refusalWindow {
		// The first in a new window is said at once; the rest of the window is counted.
		l.flushLocked()
		l.start = now
		l.log.Warn("HTTP connection bound reached (limits.max_connections; at most a quarter without a valid token)",
			"action", what)
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
		l.log.Warn("HTTP connection bound at work", "action", what, "count", n, "since", l.start.UTC().Format(time.RFC3339))
	}
	clear(l.n)
}
