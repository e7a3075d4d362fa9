package serve

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPPath is where the MCP endpoint lives.
const HTTPPath = "/mcp"

// HTTPOptions configure serving over streamable HTTP instead of stdio.
type HTTPOptions struct {
	Addr string // host:port; a non-loopback host needs a Token
	// Token is the bearer token every request must carry ("" = none, loopback only). It is
	// never logged and compared in constant time.
	Token string
	// Origins lists extra allowed Origin values (scheme://host[:port]); browsers' requests from
	// any other origin are refused (DNS rebinding, cross-site requests).
	Origins []string
	// MaxBody bounds a request body (0: 4 MiB); a bigger one gets 413.
	MaxBody int64
	// Grace is how long running calls may finish at shutdown before they are cancelled (0: 5s).
	Grace time.Duration
	// Listening, if set, is told the bound address (useful with port 0).
	Listening func(addr net.Addr)
}

// IsLoopbackHost reports whether host (no port) names only this machine.
func IsLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// CheckHTTPBind refuses an address reachable from other machines unless a token guards it.
func CheckHTTPBind(addr, token string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: %w (give HOST:PORT, e.g. 127.0.0.1:8765)", addr, err)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("--http %q: the port must be a number from 0 to 65535 (0 picks a free one)", addr)
	}
	if !IsLoopbackHost(host) && token == "" {
		return fmt.Errorf("--http %s listens beyond this machine without a token: set MCPSANDBOX_TOKEN (or --token-file) "+
			"so every request must carry it, or bind 127.0.0.1", addr)
	}
	return nil
}

// runHTTP serves the policy over streamable HTTP at HTTPPath until ctx ends, then shuts down
// gracefully: new requests are refused, running calls get o.HTTP.Grace to finish, then every
// session is closed (and its executor state ended).
func runHTTP(ctx context.Context, p *policy.Policy, ex Executor, o Options) error {
	h := o.HTTP
	if err := CheckHTTPBind(h.Addr, h.Token); err != nil {
		return err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv, r := newServer(p, ex, o)
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: log, MaxRequestBodyBytes: h.MaxBody})
	mux := http.NewServeMux()
	refusals := newRefusalLog(log, time.Now)
	defer refusals.flush()
	inflight := &postCount{}
	mux.Handle(HTTPPath, inflight.count(guard(h, refusals, mcpHandler)))
	ln, err := net.Listen("tcp", h.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is the port taken? pick another with --http)", h.Addr, err)
	}
	if h.Listening != nil {
		h.Listening(ln.Addr())
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		if err := ex.Ready(); err != nil {
			cancel(err)
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+HTTPPath, "token", h.Token != "")
	select {
	case err = <-errc:
	case <-ctx.Done():
	}
	grace := h.Grace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	sctx, scancel := context.WithTimeout(context.Background(), grace)
	defer scancel()
	log.Info("shutting down: running calls get the grace period", "grace", grace)
	// Shutdown stops the listener and idle connections at once, but would wait for every open
	// connection, and a client's standalone SSE stream (GET) stays open for as long as its
	// session: so wait for the requests that carry calls (POST) instead.
	go hs.Shutdown(sctx)
	inflight.wait(sctx) // running calls finish, up to the grace period
	r.stopAll()         // then the calls still running are cancelled (and their trees killed)
	// ...and their answers ("cancelled: shutting down") get a moment to reach their clients.
	wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
	inflight.wait(wctx)
	wcancel()
	for ss := range srv.Sessions() {
		ss.Close()
		EndSession(ex, ss)
	}
	_ = hs.Close()
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("http server: %w", err)
	}
	return nil
}

// guard checks the bearer token (401) and the Origin (403) before MCP sees the request; the
// MCP handler's own 403 (a Host that is not this machine: DNS rebinding) is logged here too.
func guard(h *HTTPOptions, refusals *refusalLog, next http.Handler) http.Handler {
	want := []byte("Bearer " + h.Token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.Token != "" {
			got := r.Header.Get("Authorization")
			if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
				reason := "wrong bearer token"
				switch {
				case got == "":
					reason = "no Authorization header"
				case !strings.HasPrefix(got, "Bearer "):
					reason = "Authorization is not a bearer token"
				}
				refusals.refused(r, http.StatusUnauthorized, reason)
				w.Header().Set("WWW-Authenticate", `Bearer realm="mcpsandbox"`)
				http.Error(w, "unauthorized: send Authorization: Bearer <token> (the token serve was started with)", http.StatusUnauthorized)
				return
			}
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, r.Host, h.Origins) {
			refusals.refused(r, http.StatusForbidden, "origin "+clip(strconv.Quote(origin))+" is not accepted")
			http.Error(w, fmt.Sprintf("forbidden: requests from origin %q are not accepted (serve --allow-origin adds one)", origin), http.StatusForbidden)
			return
		}
		next.ServeHTTP(&statusWatch{ResponseWriter: w, onForbidden: func() {
			reason := "refused by the MCP handler"
			if host, _, err := net.SplitHostPort(r.Host); err == nil && !IsLoopbackHost(host) || err != nil && !IsLoopbackHost(r.Host) {
				reason = "Host " + clip(strconv.Quote(r.Host)) + " is not this machine (DNS rebinding protection)"
			}
			refusals.refused(r, http.StatusForbidden, reason)
		}}, r)
	})
}

// postCount counts the POST requests being served (the ones that carry calls and their
// answers), so shutdown can wait for them and not for long-lived SSE streams.
type postCount struct{ n atomic.Int64 }

func (p *postCount) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			p.n.Add(1)
			defer p.n.Add(-1)
		}
		next.ServeHTTP(w, r)
	})
}

// wait returns when no POST is being served, or when ctx ends.
func (p *postCount) wait(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for p.n.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// statusWatch tells when the wrapped handler answers 403.
type statusWatch struct {
	http.ResponseWriter
	onForbidden func()
	seen        bool
}

func (s *statusWatch) WriteHeader(code int) {
	if !s.seen {
		s.seen = true
		if code == http.StatusForbidden {
			s.onForbidden()
		}
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWatch) Write(b []byte) (int, error) {
	s.seen = true
	return s.ResponseWriter.Write(b)
}

// Flush and Unwrap keep streaming (SSE) and http.ResponseController working through the wrapper.
func (s *statusWatch) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *statusWatch) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// refusalLog logs refused requests (401, 403) to serve's log, never the token, at most
// refusalBurst per refusalWindow, so a flood of bad requests cannot fill the disk; what it
// held back is counted and said once the window is over (or at shutdown).
type refusalLog struct {
	log        *slog.Logger
	now        func() time.Time
	mu         sync.Mutex
	start      time.Time
	n          int
	suppressed int
}

const (
	refusalBurst  = 10
	refusalWindow = time.Minute
)

func newRefusalLog(log *slog.Logger, now func() time.Time) *refusalLog {
	return &refusalLog{log: log, now: now, start: now()}
}

func (l *refusalLog) refused(r *http.Request, status int, reason string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if now := l.now(); now.Sub(l.start) >= refusalWindow {
		l.flushLocked()
		l.start, l.n = now, 0
	}
	if l.n >= refusalBurst {
		l.suppressed++
		return
	}
	l.n++
	l.log.Warn("refused an HTTP request", "status", status, "method", clip(r.Method), "path", clip(r.URL.Path),
		"remote", r.RemoteAddr, "reason", reason)
	if l.n == refusalBurst {
		l.log.Warn("further refused HTTP requests are counted, not logged, until the minute is over", "limit_per_minute", refusalBurst)
	}
}

func (l *refusalLog) flush() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.flushLocked()
}

func (l *refusalLog) flushLocked() {
	if l.suppressed > 0 {
		l.log.Warn("refused HTTP requests not logged individually", "count", l.suppressed, "since", l.start.UTC().Format(time.RFC3339))
		l.suppressed = 0
	}
}

// clip bounds a client-controlled string before it is logged.
func clip(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}

// originAllowed accepts an origin on this machine that names the host the request was sent
// to, or one the operator listed. A page elsewhere (DNS rebinding, a cross-site request) is
// refused.
func originAllowed(origin, host string, extra []string) bool {
	for _, o := range extra {
		if strings.EqualFold(strings.TrimSuffix(o, "/"), origin) {
			return true
		}
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	oh, rh := u.Hostname(), host
	if h, _, err := net.SplitHostPort(host); err == nil {
		rh = h
	}
	return IsLoopbackHost(oh) && IsLoopbackHost(rh)
}
