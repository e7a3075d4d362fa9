package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
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

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
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
	// BodyBudget bounds what request bodies hold in serve at once, all requests together
	// (0: DefaultBodyBudget), each body counted at httpbound.HeldPerByte times its bytes (what a
	// decoded call holds), as its bytes arrive, and shared by principal (the MCP session, else
	// the client's address: httpbound.Principal). A body that would go over it takes the charge
	// of the newest body still being read of the principal holding the most over its share
	// (at least one full body), else it is refused with 503 and Retry-After.
	BodyBudget int64
	// Grace is how long running calls may finish at shutdown before they are cancelled (0: 5s).
	Grace time.Duration
	// Listening, if set, is told the bound address (useful with port 0).
	Listening func(addr net.Addr)

	// Bounds (issue 22); 0 takes the policy's limits key where there is one, else the default.
	// MaxConns bounds open connections (0: limits.max_connections); it is kept below the
	// process's open-file limit.
	MaxConns int
	// MaxUnauthConns bounds the connections that have not yet shown a valid token (0: a
	// quarter of MaxConns); past it the oldest is closed. The rest is headroom for clients
	// with the token.
	MaxUnauthConns int
	// MaxSessions bounds live MCP sessions (0: limits.max_sessions); past it a new session
	// closes the least recently used idle one (its client's next request gets 404), and gets
	// 503 only when every session has a request or call in progress.
	MaxSessions int
	// SessionIdle ends a session with no request for this long, its executor state with it
	// (0: limits.session_idle).
	SessionIdle time.Duration
	// HeaderTimeout bounds reading a request's header (0: 10s); BodyTimeout reading the body
	// of a request with the token (0: 30s); IdleTimeout a keep-alive connection between
	// requests (0: 2m).
	HeaderTimeout, BodyTimeout, IdleTimeout time.Duration
	// WriteStall bounds how long writing an answer (or an SSE event) may go without progress
	// (0: 30s): a client that stops reading gets its connection closed, and the answer (tens of
	// MB for a read_file of control bytes) is not held for as long as the client likes.
	WriteStall time.Duration

	// built, if set (tests), is told the server state runHTTP builds.
	built func(*runner)
}

// Defaults of the HTTP bounds that have no policy key (internal/bounds holds them, for explain).
const (
	DefaultHeaderTimeout = bounds.DefaultHeaderTimeout
	DefaultBodyTimeout   = bounds.DefaultBodyTimeout
	DefaultIdleTimeout   = bounds.DefaultIdleTimeout
	DefaultWriteStall    = bounds.DefaultWriteStall
	// refusedDrain is how long a refused (401) request's body is still read, so the answer
	// reaches a client that sent a whole small body before reading it; then the connection closes.
	refusedDrain = 250 * time.Millisecond
	// DefaultMaxBody bounds one request body; DefaultBodyBudget the bodies of all requests
	// being read at once (sixteen of the largest).
	DefaultMaxBody    = bounds.DefaultMaxBody
	DefaultBodyBudget = bounds.DefaultBodyBudget
)

// bounds resolves the HTTP bounds: the option, else the policy key, else the default; the
// connection bounds kept below the open-file limit (fds: 0 = unknown).
func (h *HTTPOptions) bounds(p *policy.Policy, fds int) (b httpBounds) {
	pick := func(opt, pol, def int) int {
		switch {
		case opt > 0:
			return opt
		case pol > 0:
			return pol
		}
		return def
	}
	pickD := func(opt, pol, def time.Duration) time.Duration {
		switch {
		case opt > 0:
			return opt
		case pol > 0:
			return pol
		}
		return def
	}
	var l policy.Limits
	if p != nil {
		l = p.Limits
	}
	b.maxConns = pick(h.MaxConns, l.MaxConnections, policy.DefaultMaxConnections)
	if fds > 0 {
		// Keep a quarter of the descriptors (at least 64) for everything else serve opens:
		// the audit log, the engine's sockets, egress proxies, pipes of running calls.
		if room := fds - max(64, fds/4); b.maxConns > room {
			b.maxConns, b.clamped = max(room, 8), true
		}
	}
	b.maxUnauth = h.MaxUnauthConns
	if b.maxUnauth <= 0 || b.maxUnauth >= b.maxConns {
		b.maxUnauth = max(b.maxConns/4, 1)
	}
	b.maxSessions = pick(h.MaxSessions, l.MaxSessions, policy.DefaultMaxSessions)
	b.sessionIdle = pickD(h.SessionIdle, l.SessionIdle.Duration, policy.DefaultSessionIdle)
	b.header = pickD(h.HeaderTimeout, 0, DefaultHeaderTimeout)
	b.body = pickD(h.BodyTimeout, 0, DefaultBodyTimeout)
	b.idle = pickD(h.IdleTimeout, 0, DefaultIdleTimeout)
	b.writeStall = pickD(h.WriteStall, 0, DefaultWriteStall)
	b.maxBody, b.bodyBudget = int64(DefaultMaxBody), int64(DefaultBodyBudget)
	if h.MaxBody > 0 {
		b.maxBody = h.MaxBody
	}
	if h.BodyBudget > 0 {
		b.bodyBudget = h.BodyBudget
	}
	return b
}

type httpBounds struct {
	maxConns, maxUnauth, maxSessions int
	clamped                          bool // maxConns lowered to fit the open-file limit
	sessionIdle, header, body, idle  time.Duration
	writeStall                       time.Duration
	maxBody, bodyBudget              int64
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
func runHTTP(ctx context.Context, p *policy.Policy, ex executor.Executor, o Options) error {
	h := o.HTTP
	if err := CheckHTTPBind(h.Addr, h.Token); err != nil {
		return err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	b := h.bounds(p, openFileLimit())
	if b.clamped {
		log.Warn("limits.max_connections lowered to fit the open-file limit (raise ulimit -n to allow more)",
			"max_connections", b.maxConns, "open_file_limit", openFileLimit())
	}
	srv, r := newServer(p, ex, o)
	defer r.idle.stop()
	// a POST whose client left is held while its call is in the SDK's hands, at most as long
	// as the call may run (and its kill)
	r.posts = newPosts(r.pol.Limits.Timeout.Duration+10*time.Second, r.stop.Done())
	srv.AddReceivingMiddleware(r.posts.handledBy)
	if h.built != nil {
		h.built(r)
	}
	sessions := httpbound.NewSessions(b.maxSessions)
	evictions := newBoundLog(log, time.Now)
	evictions.msg = "HTTP session bound reached (limits.max_sessions): the least recently used idle session was closed to make room"
	defer evictions.flush()
	sessions.OnEvict = func(string) { evictions.hit("closed the least recently used idle session") }
	cuts := newBoundLog(log, time.Now)
	cuts.msg = "unread answers of all clients at their bound: an answer of the session holding the most was cut (its connection closed) to make room for a session holding less"
	defer cuts.flush()
	r.unread.onCut = func(string, int64) { cuts.hit("cut an unread answer") }
	r.slots.live = sessions.Len // many sessions: the last free slot is kept for one with no call running
	srv.AddReceivingMiddleware(countSessions(ex, r.sessions, sessions))
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: log, MaxRequestBodyBytes: b.maxBody, SessionTimeout: sessionTimeout(b.sessionIdle)})
	mux := http.NewServeMux()
	refusals := newRefusalLog(log, time.Now)
	defer refusals.flush()
	inflight := &postCount{}
	budget := httpbound.NewBudget(b.bodyBudget)
	mux.Handle(HTTPPath, inflight.count(guard(h, b, budget, bodyOwner(sessions), refusals, admitSessions(sessions, b, refusals, r.posts.track(deleteEnds(r.sessions, mcpHandler))))))
	ln, err := net.Listen("tcp", h.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is the port taken? pick another with --http)", h.Addr, err)
	}
	conns := httpbound.NewConns(b.maxConns, b.maxUnauth)
	bounded := newBoundLog(log, time.Now)
	defer bounded.flush()
	conns.OnBound = bounded.hit
	conns.Vouch = vouch(h.Token)
	ln = conns.Listener(ln)
	if h.Listening != nil {
		h.Listening(ln.Addr())
	}
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: b.header, IdleTimeout: b.idle, MaxHeaderBytes: 64 << 10,
		ConnState: conns.ConnState, ConnContext: conns.ConnContext,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go r.whenReady(ctx, cancel)
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("serving MCP over streamable HTTP", "url", "http://"+ln.Addr().String()+HTTPPath, "token", h.Token != "",
		"max_connections", b.maxConns, "max_unauthenticated", b.maxUnauth, "max_sessions", b.maxSessions, "session_idle", policy.Duration{Duration: b.sessionIdle}.String())
	warnExposure(log, h)
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
	inflight.wait(sctx)                                             // running calls finish, up to the grace period
	r.stopAll("the call was killed at the end of the grace period") // then the calls still running are cancelled (and their trees killed)
	// ...and their answers ("cancelled: shutting down") get a moment to reach their clients.
	wctx, wcancel := context.WithTimeout(context.Background(), 3*time.Second)
	inflight.wait(wctx)
	wcancel()
	for ss := range srv.Sessions() {
		ss.Close()
		r.sessions.end(ex, ss)
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

// bodyOwner is whose a request's body is, for the body budget (httpbound.Principal): its
// session's only once the session is live, as a made-up id would be a share of its own.
func bodyOwner(sessions *httpbound.Sessions) func(*http.Request) string {
	return func(r *http.Request) string {
		id := r.Header.Get(sessionIDHeader)
		if id != "" && !sessions.Live(id) {
			id = ""
		}
		return httpbound.Principal(r, id)
	}
}

// deleteEnds marks a session ending while its client's DELETE is held by the SDK, which holds
// it until the session's calls are over (sessionState.ending): its calls still waiting for a slot
// are refused, not run. A DELETE the SDK refuses (a bad protocol version, Host or session: 4xx)
// is answered at once and marks nothing (atk34b F2: it did, and the live session's later calls
// were refused as if it had ended); one answered within deleteHeld had no call to wait for.
func deleteEnds(t *sessionTable, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(sessionIDHeader)
		if r.Method != http.MethodDelete || id == "" {
			next.ServeHTTP(w, r)
			return
		}
		if mutated("delete-ends-refused") { // as it arrives, whatever the SDK makes of it
			t.endingByID(id)
		}
		sw := &answered{ResponseWriter: w}
		held := time.AfterFunc(deleteHeld, func() {
			if !sw.done.Load() {
				t.endingByID(id)
			}
		})
		defer held.Stop()
		next.ServeHTTP(sw, r)
	})
}

// deleteHeld is how long a DELETE goes unanswered before serve takes it as accepted and held.
const deleteHeld = 100 * time.Millisecond

// answered records that a response's status was written.
type answered struct {
	http.ResponseWriter
	done atomic.Bool
}

func (a *answered) WriteHeader(code int) { a.done.Store(true); a.ResponseWriter.WriteHeader(code) }
func (a *answered) Write(b []byte) (int, error) {
	a.done.Store(true)
	return a.ResponseWriter.Write(b)
}
func (a *answered) Unwrap() http.ResponseWriter { return a.ResponseWriter }

// unauthorizedHelp is what a 401 asks for, in its body and its challenge's error_description.
const unauthorizedHelp = "send Authorization: Bearer <token> (the token serve was started with)"

// challenge is a 401's WWW-Authenticate. A bearer token that is wrong (or empty: "Bearer " from
// an unset variable) gets error="invalid_token" (RFC 6750 §3), which says the token was judged,
// not that the client should go and get one by OAuth, a flow serve has none of (trial48 F4: the
// MCP Inspector answered a wrong token with "Interactive OAuth requires a TTY"). A request with no
// bearer token gets no error code, as §3 asks.
func challenge(wrongToken bool) string {
	if !wrongToken || mutated("http-401-no-invalid-token") {
		return `Bearer realm="mcpsandbox"`
	}
	return `Bearer realm="mcpsandbox", error="invalid_token", error_description="` + unauthorizedHelp + `"`
}

// guard checks the bearer token (401) and the Origin (403) before MCP sees the request; the
// MCP handler's own 403 (a Host that is not this machine: DNS rebinding) is logged here too.
// A request with the token (or any, with no token set) marks its connection authenticated,
// and its body must arrive within the body deadline. A refused request's connection is
// closed at once: its body is not waited for.
func guard(h *HTTPOptions, b httpBounds, budget *httpbound.Budget, bodyOwner func(*http.Request) string, refusals *refusalLog, next http.Handler) http.Handler {
	want := sha256.Sum256([]byte(h.Token))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// the write deadline the connection's last answer left (its final flush) is not this one's
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
		if h.Token != "" {
			got := r.Header.Get("Authorization")
			token, isBearer := bearerToken(got)
			have := sha256.Sum256([]byte(token))
			if !isBearer || subtle.ConstantTimeCompare(have[:], want[:]) != 1 {
				reason := "wrong bearer token"
				switch {
				case got == "":
					reason = "no Authorization header"
				case !isBearer:
					reason = "Authorization is not a bearer token"
				}
				refusals.refused(r, http.StatusUnauthorized, reason)
				httpbound.CloseRefused(w, refusedDrain)
				// "Bearer " (an unset variable) reaches here as "Bearer": the header's
				// trailing space is trimmed by the time it is read
				w.Header().Set("WWW-Authenticate", challenge(isBearer || strings.EqualFold(got, "Bearer")))
				http.Error(w, "unauthorized: "+unauthorizedHelp, http.StatusUnauthorized)
				return
			}
		}
		httpbound.Authenticated(r.Context())
		release, ok := budget.Charge(r, b.maxBody, httpbound.Closer(r.Context()), bodyOwner(r))
		if !ok {
			refusals.refused(r, http.StatusServiceUnavailable, "the request bodies held are at the server-wide budget")
			httpbound.CloseRefused(w, refusedDrain)
			w.Header().Set("Retry-After", "1")
			http.Error(w, fmt.Sprintf("service unavailable: the request bodies serve holds are at its bound for all requests at once (%s, each body "+
				"counted at %d times its size, what a decoded call holds); retry in a moment", policy.Size(budget.Max()), httpbound.HeldPerByte), http.StatusServiceUnavailable)
			return
		}
		defer release()
		if r.Body != nil && r.Body != http.NoBody && r.ContentLength != 0 {
			r.Body = httpbound.BodyDeadline(w, r, b.body)
		}
		if origin := r.Header.Get("Origin"); origin != "" && !originAllowed(origin, r.Host, h.Origins) {
			refusals.refused(r, http.StatusForbidden, "origin "+clip(strconv.Quote(origin))+" is not accepted")
			httpbound.CloseRefused(w, refusedDrain)
			http.Error(w, fmt.Sprintf("forbidden: requests from origin %q are not accepted (serve --allow-origin adds one)", origin), http.StatusForbidden)
			return
		}
		if !checkHTTPMessage(w, r, b.maxBody) {
			return
		}
		sw := &statusWatch{ResponseWriter: w, stall: b.writeStall, rc: http.NewResponseController(w), onForbidden: func() {
			reason := "refused by the MCP handler"
			if host, _, err := net.SplitHostPort(r.Host); err == nil && !IsLoopbackHost(host) || err != nil && !IsLoopbackHost(r.Host) {
				reason = "Host " + clip(strconv.Quote(r.Host)) + " is not this machine (DNS rebinding protection)"
			}
			refusals.refused(r, http.StatusForbidden, reason)
		}}
		// the server's own final flush, after the handler, is bounded too
		defer sw.deadline()
		next.ServeHTTP(sw, r)
	})
}

// vouch is what Conns.Vouch is for token: nil without one (every request is let in).
func vouch(token string) func([]byte) bool {
	if token == "" {
		return nil
	}
	return func(head []byte) bool { return headHasToken(head, token) }
}

// headHasToken says whether the start of a request head carries Authorization: Bearer token on
// a whole line (compared in constant time, as the guard does).
func headHasToken(head []byte, token string) bool {
	want := sha256.Sum256([]byte(token))
	lines := bytes.Split(head, []byte("\n"))
	for _, l := range lines[:len(lines)-1] { // the last is not whole yet
		l = bytes.TrimSuffix(l, []byte("\r"))
		if len(l) == 0 {
			return false // the head's end
		}
		name, value, ok := bytes.Cut(l, []byte(":"))
		if !ok || !strings.EqualFold(string(name), "Authorization") {
			continue
		}
		got, isBearer := bearerToken(strings.TrimSpace(string(value)))
		have := sha256.Sum256([]byte(got))
		if isBearer && subtle.ConstantTimeCompare(have[:], want[:]) == 1 {
			return true
		}
	}
	return false
}

// bearerToken takes the token out of an Authorization value: the scheme is matched without
// regard to case and one or more spaces may follow it (RFC 7235 section 2.1).
func bearerToken(v string) (string, bool) {
	scheme, rest, ok := strings.Cut(v, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	return strings.TrimLeft(rest, " "), true
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

// statusWatch tells when the wrapped handler answers 403, and bounds each write's wait for the
// client (stall): an answer is written a chunk at a time, each within stall of the last.
type statusWatch struct {
	http.ResponseWriter
	onForbidden func()
	seen        bool
	stall       time.Duration
	rc          *http.ResponseController
}

// writeChunk is how much of an answer one write deadline covers: a slow client that reads
// keeps its answer coming, one that stops is cut within the stall bound.
const writeChunk = 64 << 10

// deadline gives the next write (or flush) until stall from now to make progress.
func (s *statusWatch) deadline() {
	if s.stall > 0 && s.rc != nil && !mutated("http-write-stall") {
		_ = s.rc.SetWriteDeadline(time.Now().Add(s.stall))
	}
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
	if len(b) == 0 {
		return s.ResponseWriter.Write(b)
	}
	n := 0
	for n < len(b) {
		s.deadline()
		m, err := s.ResponseWriter.Write(b[n:min(len(b), n+writeChunk)])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Flush and Unwrap keep streaming (SSE) and http.ResponseController working through the wrapper.
func (s *statusWatch) Flush() {
	s.deadline()
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

// warnExposure says, at WARN, who can reach serve and how: without a token, every local process;
// beyond loopback, in plain HTTP.
func warnExposure(log *slog.Logger, h *HTTPOptions) {
	warnNoToken(log, h.Token)
	warnPlainHTTP(log, h.Addr)
}

// warnPlainHTTP says, at WARN, that serve bound beyond this machine speaks plain HTTP: the
// token and every call cross the network as they are, and nothing else said so (trial40 F4).
func warnPlainHTTP(log *slog.Logger, addr string) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || IsLoopbackHost(host) || mutated("serve-http-plain-quiet") {
		return
	}
	log.Warn("plain HTTP beyond this machine: the bearer token and every call and answer cross the network unencrypted",
		"fix", "put serve behind a TLS reverse proxy (caddy, nginx) and bind 127.0.0.1, or reach it through an SSH tunnel (ssh -L 8765:127.0.0.1:8765 HOST)")
}

// warnNoToken: clients that send a token connect all the same to a serve that checks none, so
// only this line says none is checked (trial36 F3: init's serve line run where the variable was
// not set).
func warnNoToken(log *slog.Logger, token string) {
	if token == "" && !mutated("serve-http-no-token-quiet") {
		log.Warn("no bearer token: every local process and user can call this server",
			"fix", "set MCPSANDBOX_TOKEN (e.g. from `openssl rand -hex 32`) or --token-file where serve starts: the token your clients send")
	}
}
