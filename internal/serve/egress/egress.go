// Package egress is serve's egress proxy: an HTTP CONNECT and plain-HTTP forward proxy that lets
// a sandbox reach exactly the hosts a policy's `network` list names, and nothing else.
//
// The proxy resolves names itself (the sandbox has no resolver of its own), refuses IP literals
// unless a rule names that address, checks every address it is about to connect to against
// ranges that are never reachable (cloud metadata, loopback, private, link-local, CGNAT,
// multicast, IPv6 forms carrying one of those: see policy.DeniedAddr; and this host's own
// interface addresses) at connect time, so a listed name that resolves or rebinds to one of
// them gets nowhere, refuses a CONNECT whose TLS server name (SNI) is not the CONNECT host
// (domain fronting) or that carries no TLS at all where the rule does not name a port other
// than 443 (a port it names may carry any protocol but plain HTTP, which goes through as
// http:// URLs), and refuses a plain-HTTP request whose Host header is not its URL's host. Every
// decision goes to Options.Audit, clipped and rate-limited (see MaxLogHost, Options.LogRate);
// a refusal answered before a tunnel opens is a 403 whose body names the rule, one after the
// tunnel's 200 a TLS access_denied alert (or the sentence, to a client that spoke no TLS).
// Pure Go, no OS-specific code.
package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Resolver looks names up; *net.Resolver satisfies it. Tests inject their own.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Options configure a Proxy. Zero values take the defaults named on each field.
type Options struct {
	// Key is the policy key named in refusals, e.g. "docker.network" (default "network").
	Key string
	// Resolver resolves host names (default net.DefaultResolver).
	Resolver Resolver
	// Dial connects to an "ip:port" the proxy has already checked (default a net.Dialer whose
	// Control re-checks the address at connect time). The connection's remote address is
	// checked again after it returns.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// Audit receives every decision, once per request or tunnel (for an allowed tunnel, when it
	// ends, with its byte counts). It must not block for long.
	Audit func(Decision)
	// Denied, when set, gets every refusal as it is taken, before Options.LogRate bounds the
	// audit's copies: what a call's result names (the program may print only "403").
	Denied func(Decision)
	// Logger gets a line per decision (default: discard).
	Logger *slog.Logger
	// TestOnlyAllowLoopback re-opens 127.0.0.0/8 and ::1, for tests whose "remote" servers run
	// on loopback (and the bench's). Every other denied range stays denied. Nothing in serve
	// sets it.
	TestOnlyAllowLoopback bool
	// TestOnlyAllowAddrs re-opens exact addresses (ip:port) in the denied ranges, for tests and
	// the stand-in hook of a test build (standins.go, -tags testhooks), whose stand-in hosts
	// listen on loopback while every other loopback port (the harness's own listeners) stays
	// denied. Nothing in a release build sets it.
	TestOnlyAllowAddrs []netip.AddrPort
	// MaxConns bounds connections handled at once, tunnels included (default 64); more are
	// answered 503 (rule RuleLimit).
	MaxConns int
	// Scope says in refusals what one proxy serves, e.g. "call" or "container" (default
	// "sandbox"): "at most 64 egress connections at once per call".
	Scope string
	// MaxWildcardNames bounds the distinct names this proxy resolves under wildcard rules
	// ("*.example.com"; default DefaultMaxWildcardNames, negative = no bound). Every such name
	// is a DNS query serve makes for the sandbox, so a wildcard is a channel out through DNS;
	// past the bound a new name is refused (rule RuleLimit) while names seen before still work
	// and names listed exactly are never counted.
	MaxWildcardNames int
	// LogRate bounds the decisions logged one by one (audit and Logger) per second (default
	// DefaultLogRate); the rest are counted and summarised in one decision with rule
	// RuleLogRate when the second is over (and at Close).
	LogRate int
	// LocalAddrs lists this host's own addresses, which are never reachable (a listed name
	// resolving to one of them would reach services bound to 0.0.0.0). Default: the addresses
	// of every interface (net.InterfaceAddrs), read again every LocalAddrsRefresh. Tests inject
	// their own.
	LocalAddrs func() []netip.Addr
	// MaxHeaderBytes bounds a request's head (default 16 KiB); more is answered 431.
	MaxHeaderBytes int
	// MaxAnswerHeadBytes bounds the head of a listed host's answer to a plain-http request
	// (default DefaultMaxAnswerHeadBytes); past it the client gets 502 (rule RuleUpstream).
	MaxAnswerHeadBytes int
	// HeaderTimeout bounds the wait for a request head and for a tunnel's TLS ClientHello
	// (default 10s).
	HeaderTimeout time.Duration
	// IdleTimeout closes a tunnel or an upstream exchange after this long without a byte in
	// either direction (default 2m).
	IdleTimeout time.Duration
	// DialTimeout bounds resolving and connecting (default 10s).
	DialTimeout time.Duration
}

// Decision is one egress decision, as the audit log records it.
type Decision struct {
	Time   time.Time `json:"time"`
	Client string    `json:"client,omitempty"` // the sandbox side's address as the proxy saw it
	Method string    `json:"method"`           // CONNECT, GET, ...
	// Call is the id of the call the sandbox serves ("" when not known): the audit line's
	// arguments.call, which joins the decision to that call's started and outcome lines
	// (atk39 F5). Not the line's own "call", which pairs a call's started line with its outcome.
	Call string `json:"call,omitempty"`
	// DuringCall is the call that ran when a connection was made whose process may be another
	// call's (a session container's background processes outlive the call that started them):
	// the line's arguments.during_call, set instead of Call. Naming it Call blamed a call that
	// made no connection (atk39b F9).
	DuringCall string `json:"during_call,omitempty"`
	Host       string `json:"host"`
	Port       int    `json:"port"`
	Addr       string `json:"addr,omitempty"` // the address connected to
	Allowed    bool   `json:"allowed"`
	// Rule is the host rule that allowed the request (as canonically written, e.g. "pypi.org"),
	// or the check that refused it: the policy key (not listed), or one of RuleDeniedAddr,
	// RuleSNI, RuleNotTLS, RuleHostHeader, RuleBadRequest, RuleLimit, RuleUpstream; or, for a
	// summary of decisions past Options.LogRate, RuleLogRate.
	Rule   string `json:"rule"`
	Reason string `json:"reason,omitempty"` // a refusal's sentence (the 403 body)
	// sentence: serve's own words for a refusal by the policy's host list (notListed: the
	// host, port and key only), for Note; other rules' are fixed (ruleSentences)
	sentence string
	BytesOut int64         `json:"bytes_out,omitempty"` // sandbox -> host
	BytesIn  int64         `json:"bytes_in,omitempty"`  // host -> sandbox
	Duration time.Duration `json:"duration_ns,omitempty"`
	// A summary (Rule RuleLogRate) counts the decisions it stands for instead of one decision.
	Suppressed        int `json:"suppressed,omitempty"`
	SuppressedDenied  int `json:"suppressed_denied,omitempty"`
	SuppressedAllowed int `json:"suppressed_allowed,omitempty"`
}

// Rules that refuse besides the policy key.
const (
	RuleDeniedAddr = "denied-address" // the host resolves only to never-reachable addresses
	RuleSNI        = "tls-sni"        // TLS server name absent or not the CONNECT host
	RuleNotTLS     = "not-tls"        // a CONNECT tunnel that does not start with a TLS ClientHello
	RuleHostHeader = "host-header"    // plain HTTP whose Host header is not the URL's host
	RuleBadRequest = "bad-request"    // not a proxy request
	RuleLimit      = "limit"          // too many connections or wildcard names, head too large or too slow
	RuleUpstream   = "upstream"       // listed, but resolving or connecting failed
)

// DefaultMaxAnswerHeadBytes is Options.MaxAnswerHeadBytes' default: a listed host's answer head
// (status line and headers) of endless header lines was held whole.
const DefaultMaxAnswerHeadBytes = 256 << 10

// DefaultMaxWildcardNames is Options.MaxWildcardNames' default.
const DefaultMaxWildcardNames = 64

// LocalAddrsRefresh is how long the default Options.LocalAddrs list is used before it is read
// again (interfaces come and go: docker networks, VPNs).
const LocalAddrsRefresh = 30 * time.Second

// Proxy is an egress proxy for one list of host rules.
type Proxy struct {
	rules []policy.HostRule
	o     Options
	log   *slog.Logger
	sem   chan struct{}

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]bool
	conns  map[net.Conn]bool
	wg     sync.WaitGroup
	names  map[string]bool // names resolved under wildcard rules
	lim    logLimiter
	emitMu sync.Mutex // one decision (or summary) reaches Audit at a time, in order

	ownMu sync.Mutex
	own   map[netip.Addr]bool
	ownAt time.Time
}

// New makes a proxy for rules (see policy.Network.Hosts).
//
// When MCPSANDBOX_EGRESS_STANDINS is set (a test hook: see StandInsEnv), names resolve only
// through its map and its exact ip:ports are re-opened.
func New(rules []policy.HostRule, o Options) *Proxy {
	applyStandIns(&o)
	if o.Key == "" {
		o.Key = "network"
	}
	if o.Resolver == nil {
		o.Resolver = net.DefaultResolver
	}
	if o.MaxConns <= 0 {
		o.MaxConns = 64
	}
	if o.MaxAnswerHeadBytes <= 0 {
		o.MaxAnswerHeadBytes = DefaultMaxAnswerHeadBytes
	}
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = 16 << 10
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 10 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 2 * time.Minute
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 10 * time.Second
	}
	if o.Scope == "" {
		o.Scope = "sandbox"
	}
	if o.MaxWildcardNames == 0 {
		o.MaxWildcardNames = DefaultMaxWildcardNames
	}
	if o.LogRate <= 0 {
		o.LogRate = DefaultLogRate
	}
	p := &Proxy{rules: append([]policy.HostRule(nil), rules...), o: o, log: o.Logger,
		sem: make(chan struct{}, o.MaxConns), lns: map[net.Listener]bool{}, conns: map[net.Conn]bool{},
		names: map[string]bool{}, lim: logLimiter{rate: o.LogRate}}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.o.Dial == nil {
		d := &net.Dialer{Timeout: o.DialTimeout, Control: p.control}
		p.o.Dial = d.DialContext
	}
	return p
}

// ErrClosed is returned by Serve after Close.
var ErrClosed = errors.New("egress proxy closed")

// Serve accepts connections on l until Close (then it returns ErrClosed) or an accept error.
func (p *Proxy) Serve(l net.Listener) error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		l.Close()
		return ErrClosed
	}
	p.lns[l] = true
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.lns, l)
		p.mu.Unlock()
	}()
	for {
		c, err := l.Accept()
		if err != nil {
			p.mu.Lock()
			closed := p.closed
			p.mu.Unlock()
			if closed {
				return ErrClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("egress proxy: accept: %w", err)
		}
		go p.ServeConn(c)
	}
}

// Close stops every listener given to Serve, closes every connection in progress and waits
// for their handlers to return.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for l := range p.lns {
		l.Close()
	}
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
	p.flush() // the decisions counted but not yet summarised
	return nil
}

// track registers c; false when the proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = true
	p.wg.Add(1)
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
	p.wg.Done()
}

// ServeConn handles one client connection (one request, or one tunnel) and closes it.
func (p *Proxy) ServeConn(c net.Conn) {
	if !p.track(c) {
		c.Close()
		return
	}
	defer p.untrack(c)
	d := Decision{Time: time.Now()}
	if ra := c.RemoteAddr(); ra != nil {
		d.Client = ra.String()
	}
	if cc, ok := c.(interface{ CallID() string }); ok {
		d.Call = cc.CallID() // the call the sandbox ran when it connected (atk39 F5)
	}
	if cc, ok := c.(interface{ DuringCallID() string }); ok {
		d.DuringCall = cc.DuringCallID() // a call that ran then, not necessarily the connecting one (atk39b F9)
	}
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	default:
		d.Method = "?"
		p.refuse(c, &d, http.StatusServiceUnavailable, RuleLimit,
			fmt.Sprintf("too many egress connections at once: at most %d per %s (the egress connection bound); retry when one ends", p.o.MaxConns, p.o.Scope))
		return
	}
	br := bufio.NewReaderSize(c, 4096)
	c.SetReadDeadline(time.Now().Add(p.o.HeaderTimeout))
	head, err := readHead(br, p.o.MaxHeaderBytes)
	if err != nil {
		d.Method = "?"
		switch {
		case errors.Is(err, errHeadTooLarge):
			p.refuse(c, &d, http.StatusRequestHeaderFieldsTooLarge, RuleLimit,
				fmt.Sprintf("request head larger than %d bytes", p.o.MaxHeaderBytes))
		case len(head) > 0:
			p.refuse(c, &d, http.StatusBadRequest, RuleBadRequest, "incomplete request head: "+err.Error())
		}
		return // a client that sent nothing is not a decision
	}
	req, err := http.ReadRequest(bufio.NewReader(io.MultiReader(bytes.NewReader(head), br)))
	if err != nil {
		d.Method = "?"
		p.refuse(c, &d, http.StatusBadRequest, RuleBadRequest, "not an HTTP proxy request: "+err.Error())
		return
	}
	d.Method = req.Method
	if req.Method == http.MethodConnect {
		p.connect(c, br, req, &d)
		return
	}
	p.forward(c, req, hostHeaders(head), &d)
}

// connect handles CONNECT host:port: check, resolve, connect, answer 200, then relay bytes
// both ways. A tunnel allowed by a rule without a port or with port 443 must start with a TLS
// ClientHello naming the CONNECT host (read before anything is relayed); one allowed by a rule
// naming another port (ssh on "host:22", a database) may carry anything, and if it starts
// with a ClientHello that one's server name is checked the same way.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request, d *Decision) {
	host, port, err := splitHostPort(req.RequestURI, 0)
	if err != nil {
		p.refuse(c, d, http.StatusBadRequest, RuleBadRequest, fmt.Sprintf("CONNECT target %q: %v", req.RequestURI, err))
		return
	}
	d.Host, d.Port = host, port
	up, rule, ok := p.open(c, d)
	if !ok {
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	var first []byte
	var gate func(*bufio.Reader) ([]byte, *refusal)
	if rule.Port == 0 || rule.Port == 443 {
		c.SetReadDeadline(time.Now().Add(p.o.HeaderTimeout))
		sni, hello, err := readClientHello(br)
		if err != nil {
			why := fmt.Sprintf("the tunnel to %s did not start with a TLS ClientHello (%v): port 443 carries TLS only; use an http:// URL through the proxy for plain HTTP", hostPort(host, port), err)
			if port != 443 {
				why = fmt.Sprintf("the tunnel to %s did not start with a TLS ClientHello (%v): a tunnel to a host listed without a port (%s) carries TLS only; use an http:// URL through the proxy for plain HTTP, or list %q for another protocol on port %d",
					hostPort(host, port), err, rule, hostPort(host, port), port)
			}
			p.refuseTunnel(c, d, hello, &refusal{rule: RuleNotTLS, why: why})
			return
		}
		if r := p.checkSNI(host, port, sni); r != nil {
			r.tls = true
			p.refuseTunnel(c, d, hello, r)
			return
		}
		first = hello
	} else {
		// anything may flow, and the server may speak first: relay at once; only a
		// ClientHello, if the client starts with one, is read and checked before it goes on
		gate = func(r *bufio.Reader) ([]byte, *refusal) {
			b, err := r.Peek(1)
			if err != nil {
				return nil, nil
			}
			if m := httpMethod(r); m != "" {
				// plain HTTP has its own way through the proxy, which checks every request's
				// Host header: inside a tunnel a second request could name any other site
				// served at the listed address
				return nil, &refusal{rule: RuleNotTLS, http: true, why: fmt.Sprintf("the tunnel to %s carries plain HTTP (%s ...): send http:// URLs through the proxy instead (HTTP_PROXY), which checks each request's Host header",
					hostPort(host, port), clip(m, 32))}
			}
			if b[0] != recordHandshake {
				return nil, nil
			}
			sni, hello, err := readClientHello(r)
			if err != nil {
				return hello, nil // not TLS after all: a protocol of its own, allowed on this port
			}
			if rr := p.checkSNI(host, port, sni); rr != nil {
				rr.tls = true
				return nil, rr
			}
			return hello, nil
		}
	}
	c.SetReadDeadline(time.Time{})
	start := time.Now()
	out, in, r := p.relay(c, br, first, up, gate)
	if r != nil {
		p.refuseTunnel(c, d, nil, r)
		return
	}
	d.Allowed, d.BytesOut, d.BytesIn, d.Duration = true, out, in, time.Since(start)
	p.emit(d)
}

// refusal is a tunnel refused after its 200.
type refusal struct {
	rule, why string
	tls       bool // the client sent a ClientHello: answer with a TLS alert
	http      bool // the client sent an HTTP request: answer with a 403
}

// maxRequestLine bounds how much of a tunnel's first line the plain-HTTP check waits for: a
// line still reading as a request line this far in is taken for one (servers accept request
// lines of 8 KiB and more, so a longer target must not carry a request past the check).
const maxRequestLine = 8192

// Verdicts of requestLine on the bytes seen so far.
const (
	lineNotHTTP = iota // no HTTP server would parse this as a request line
	lineMore           // could still be one: more bytes decide
	lineHTTP           // a request line, or as far as the bound allows, one
)

// requestLine judges whether b starts as something an HTTP/1 server parses as a request
// (RFC 9112 §3): leading CR/LF and other white space (which servers skip, §2.2), a method
// that is any RFC 9110 token in any case (M-SEARCH, get), white space, then either a
// request-target in origin, asterisk or absolute form ("/", "*", "scheme://", or any target
// of CONNECT): Node's parser takes "GET /" with no version as a request and reads the Host
// header after it; or "HTTP/" (any case) later on the first line ("PRI * HTTP/2.0"). It
// returns the method once seen. A deny check: the bad form is recognised by its grammar, not
// by listed spellings, and what the bound cuts short counts as HTTP.
func requestLine(b []byte) (method string, verdict int) {
	i := 0
	spellings := mutated("egress-tunnel-http-spellings") // the old check: upper-case methods, nothing before
	for i < len(b) && isSpace(b[i]) && !spellings {
		i++
	}
	start := i
	for i < len(b) && isTchar(b[i]) && (!spellings || 'A' <= b[i] && b[i] <= 'Z') {
		i++
	}
	if i == len(b) {
		return "", more(len(b))
	}
	if i == start || !isBlank(b[i]) {
		return "", lineNotHTTP
	}
	method = string(b[start:i])
	line := b[i:]
	end := bytes.IndexAny(line, "\r\n")
	if end >= 0 {
		line = line[:end]
	}
	target := bytes.TrimLeft(line, " \t\v\f")
	if t := bytes.IndexAny(target, " \t\v\f"); t >= 0 {
		target = target[:t]
	}
	switch {
	case strings.EqualFold(method, http.MethodConnect),
		len(target) > 0 && (target[0] == '/' || target[0] == '*'),
		bytes.Contains(target, []byte("://")),
		containsFold(line, "HTTP/"):
		return method, lineHTTP
	case end >= 0:
		return method, lineNotHTTP // a line of a protocol of its own ("EHLO mail.test")
	}
	return method, more(len(b))
}

// more: wait for another byte, unless the bound is reached (then it counts as HTTP).
func more(n int) int {
	if n >= maxRequestLine {
		return lineHTTP
	}
	return lineMore
}

// containsFold: b holds s (upper-case letters and '/') in any case.
func containsFold(b []byte, s string) bool {
next:
	for i := 0; i+len(s) <= len(b); i++ {
		for j := 0; j < len(s); j++ {
			if c := b[i+j]; c != s[j] && c != s[j]|0x20 {
				continue next
			}
		}
		return true
	}
	return false
}

// isBlank: white space within a line.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\v' || c == '\f' }

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// isTchar: RFC 9110 §5.6.2 token characters.
func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

// httpMethod returns the method of an HTTP/1 request r starts with ("" = none), waiting
// byte by byte while the bytes could still be one (a request split into small writes is
// still seen), up to maxRequestLine bytes; r's buffer must hold that many.
func httpMethod(r *bufio.Reader) string {
	for n := 1; ; n = max(n+1, r.Buffered()) { // judge what has come, wait for one more byte
		b, err := r.Peek(min(n, maxRequestLine))
		if err != nil {
			return ""
		}
		switch m, v := requestLine(b); v {
		case lineNotHTTP:
			return ""
		case lineHTTP:
			if m == "" {
				m = "?"
			}
			return m
		}
	}
}

// checkSNI refuses a ClientHello that names no server or another one than the CONNECT host.
func (p *Proxy) checkSNI(host string, port int, sni string) *refusal {
	_, isIP := parseIP(host)
	switch {
	case sni == "" && !isIP:
		return &refusal{rule: RuleSNI, why: fmt.Sprintf("the TLS ClientHello to %s names no server (SNI): the name checked must be the name used", hostPort(host, port))}
	case sni != "" && sni != host:
		return &refusal{rule: RuleSNI, why: fmt.Sprintf("TLS server name %q differs from the CONNECT host %q (domain fronting)", clip(sni, MaxLogHost), host)}
	}
	return nil
}

// refuseTunnel ends a tunnel whose 200 is sent: the client is told in its own protocol where
// it can be (a TLS access_denied alert to a ClientHello, an HTTP 403 to an HTTP request sent
// inside the tunnel, else the sentence as a line of text), and the refusal is audited and
// logged at warning level, saying that the client saw its tunnel open first.
func (p *Proxy) refuseTunnel(c net.Conn, d *Decision, sent []byte, r *refusal) {
	why := r.why + " (refused after the tunnel opened: the client saw 200, then this)"
	d.Allowed, d.Rule, d.Reason = false, r.rule, why
	clipDecision(d)
	p.tell(d)
	c.SetWriteDeadline(time.Now().Add(p.o.HeaderTimeout))
	switch {
	case r.tls:
		c.Write(tlsAlertAccessDenied)
	case r.http || looksHTTP(sent):
		body := fmt.Sprintf("mcpsandbox: egress to %s denied: %s\n", hostPort(d.Host, d.Port), d.Reason)
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Mcpsandbox-Egress: denied\r\n\r\n%s", len(body), body)
	default:
		fmt.Fprintf(c, "mcpsandbox: egress to %s denied: %s\r\n", hostPort(d.Host, d.Port), d.Reason)
	}
	p.emitLevel(d, slog.LevelWarn)
}

// looksHTTP: b starts like an HTTP/1 request line ("GET / ...", as far as b goes).
func looksHTTP(b []byte) bool {
	m, v := requestLine(b)
	return m != "" && v != lineNotHTTP
}

// forward handles a plain-HTTP proxy request (absolute http:// URL): one request per
// connection, sent upstream in origin form with Connection: close.
func (p *Proxy) forward(c net.Conn, req *http.Request, hosts []string, d *Decision) {
	u := req.URL
	if u == nil || u.Scheme != "http" || u.Host == "" {
		why := "this is an egress proxy: send absolute http:// URLs, or CONNECT host:443 for https"
		if u != nil && u.Scheme == "https" {
			why = "https:// through a forward proxy must use CONNECT (set HTTPS_PROXY)"
		}
		p.refuse(c, d, http.StatusBadRequest, RuleBadRequest, why)
		return
	}
	host, port, err := splitHostPort(u.Host, 80)
	if err != nil {
		p.refuse(c, d, http.StatusBadRequest, RuleBadRequest, fmt.Sprintf("URL host %q: %v", u.Host, err))
		return
	}
	d.Host, d.Port = host, port
	if len(hosts) > 1 {
		p.refuse(c, d, http.StatusForbidden, RuleHostHeader, fmt.Sprintf("%d Host headers: send exactly one", len(hosts)))
		return
	}
	if len(hosts) == 1 {
		hh, hp, err := splitHostPort(hosts[0], 80)
		if err != nil || hh != host || hp != port {
			p.refuse(c, d, http.StatusForbidden, RuleHostHeader, fmt.Sprintf("Host header %q differs from the request URL's host %q", hosts[0], hostPort(host, port)))
			return
		}
	}
	up, _, ok := p.open(c, d)
	if !ok {
		return
	}
	defer up.Close()
	start := time.Now()
	cu := &countConn{Conn: up, idle: p.o.IdleTimeout}
	for _, h := range []string{"Proxy-Connection", "Proxy-Authorization", "Connection", "Keep-Alive", "Upgrade", "Te", "Trailer"} {
		req.Header.Del(h)
	}
	req.RequestURI, req.Host, req.Close = "", u.Host, true
	c.SetReadDeadline(time.Time{})
	// the body streams from the client through a reader that refreshes the idle deadline
	req.Body = struct {
		io.Reader
		io.Closer
	}{&idleReader{r: req.Body, c: c, idle: p.o.IdleTimeout}, req.Body}
	if err := req.Write(cu); err != nil {
		p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("sending the request to %s: %v", hostPort(host, port), err))
		return
	}
	// the answer's head is read within MaxAnswerHeadBytes (http.ReadResponse holds a head
	// whole, however long), its body streams through unbounded
	head := &io.LimitedReader{R: cu, N: int64(p.o.MaxAnswerHeadBytes)}
	if mutated("egress-answer-head") {
		head.N = math.MaxInt64
	}
	resp, err := http.ReadResponse(bufio.NewReader(head), req)
	if err != nil {
		if head.N <= 0 {
			err = fmt.Errorf("its head is over %d bytes, the bound of an answer's head: dropped unread", p.o.MaxAnswerHeadBytes)
		}
		p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("reading the answer of %s: %v", hostPort(host, port), err))
		return
	}
	head.N = math.MaxInt64
	defer resp.Body.Close()
	for _, h := range []string{"Connection", "Keep-Alive", "Proxy-Connection", "Upgrade"} {
		resp.Header.Del(h)
	}
	resp.Close = true
	cc := &countConn{Conn: c, idle: p.o.IdleTimeout}
	resp.Write(cc) //nolint:errcheck // a client gone mid-answer ends the exchange either way
	d.Allowed, d.BytesOut, d.BytesIn, d.Duration = true, cu.written, cu.read, time.Since(start)
	p.emit(d)
}

// open checks d.Host:d.Port against the rules, resolves it, and connects to the first
// address that is not denied. On refusal it answers the client and audits; ok is false.
// A name listed exactly wins over a wildcard that also matches it.
func (p *Proxy) open(c net.Conn, d *Decision) (net.Conn, policy.HostRule, bool) {
	host, port := d.Host, d.Port
	target := hostPort(host, port)
	var matched policy.HostRule
	if _, isIP := parseIP(host); !isIP && len(host) > maxHostName {
		p.refuse(c, d, http.StatusBadRequest, RuleBadRequest, fmt.Sprintf("a host name of %d bytes: DNS names are at most %d", len(host), maxHostName))
		return nil, matched, false
	}
	listed := false
	for _, r := range p.rules {
		if r.Matches(host, port) && (!listed || isWildcard(matched) && !isWildcard(r)) {
			matched, listed = r, true
		}
	}
	if !listed {
		d.sentence = p.notListed(host, port)
		p.refuse(c, d, http.StatusForbidden, p.o.Key, d.sentence)
		return nil, matched, false
	}
	d.Rule = matched.String()
	if isWildcard(matched) && !p.wildcardName(host) {
		p.refuse(c, d, http.StatusForbidden, RuleLimit, fmt.Sprintf("%s matches %s, but this %s has already had %d other names below wildcard rules resolved (the wildcard name bound, against tunnelling data out through DNS queries): list the name exactly (add %q) to reach it",
			host, matched, p.o.Scope, p.o.MaxWildcardNames, host))
		return nil, matched, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), p.o.DialTimeout)
	defer cancel()
	var addrs []netip.Addr
	if ip, isIP := parseIP(host); isIP {
		addrs = []netip.Addr{ip}
	} else {
		var err error
		addrs, err = p.o.Resolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(addrs) == 0 {
			p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("%s is listed (%s) but does not resolve: %v", host, matched, err))
			return nil, matched, false
		}
	}
	var denied []string
	var lastErr error
	tried := 0
	for _, a := range addrs {
		a = a.Unmap()
		if why := p.denied(a, uint16(port)); why != "" {
			denied = append(denied, a.String()+", "+why)
			continue
		}
		if tried == 4 {
			break
		}
		tried++
		addr := netip.AddrPortFrom(a, uint16(port)).String()
		up, err := p.o.Dial(ctx, "tcp", addr)
		if err != nil {
			lastErr = err
			continue
		}
		// whatever Dial did, the connection must end at a reachable address
		if ra, err := netip.ParseAddrPort(up.RemoteAddr().String()); err != nil || p.denied(ra.Addr(), ra.Port()) != "" {
			up.Close()
			why := "an unknown address"
			if err == nil {
				why = ra.Addr().String() + ", " + p.denied(ra.Addr(), ra.Port())
			}
			denied = append(denied, why)
			continue
		}
		d.Addr = up.RemoteAddr().String()
		return up, matched, true
	}
	if tried == 0 || lastErr == nil {
		d.Rule = RuleDeniedAddr
		p.refuse(c, d, http.StatusForbidden, RuleDeniedAddr, fmt.Sprintf("%s resolves to %s, which is never reachable (cloud metadata, loopback, private ranges and this host's own addresses are always denied, whatever %s lists)", host, strings.Join(denied, "; "), p.o.Key))
		return nil, matched, false
	}
	p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("%s is listed (%s) but connecting failed: %v", target, matched, lastErr))
	return nil, matched, false
}

// maxHostName is the longest DNS name (RFC 1035): a longer one never resolves, so it is
// refused before any rule or lookup.
const maxHostName = 253

func isWildcard(r policy.HostRule) bool { return strings.HasPrefix(r.Pattern, "*.") }

// wildcardName counts host among the names resolved under wildcard rules; false past the bound
// (a name counted before is always allowed again).
func (p *Proxy) wildcardName(host string) bool {
	if p.o.MaxWildcardNames < 0 {
		return true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.names[host] {
		return true
	}
	if len(p.names) >= p.o.MaxWildcardNames {
		return false
	}
	p.names[host] = true
	return true
}

// notListed is the refusal for a host:port no rule matches, with the entry that would allow it.
func (p *Proxy) notListed(host string, port int) string {
	add := host
	if ip, ok := parseIP(host); ok && ip.Is6() {
		add = "[" + host + "]"
	}
	if port != 80 && port != 443 {
		add += ":" + strconv.Itoa(port)
	}
	for _, r := range p.rules {
		for _, q := range r.Ports() {
			if r.Matches(host, q) {
				return fmt.Sprintf("port %d is not allowed for %s by %s (add %q to allow it)", port, host, p.o.Key, add)
			}
		}
	}
	if _, ok := parseIP(host); ok {
		return fmt.Sprintf("IP address not in %s (use the host's name, or add %q to allow it)", p.o.Key, add)
	}
	return fmt.Sprintf("not in %s (add %q to allow it)", p.o.Key, add)
}

// denied says why the proxy never connects to a:port ("" = allowed).
func (p *Proxy) denied(a netip.Addr, port uint16) string {
	a = a.Unmap()
	if p.o.TestOnlyAllowLoopback && policy.IsLoopback(a) {
		return ""
	}
	for _, x := range p.o.TestOnlyAllowAddrs {
		if x.Addr().Unmap() == a && x.Port() == port {
			return ""
		}
	}
	if why := policy.DeniedAddr(a); why != "" {
		return why
	}
	if p.isOwn(a) {
		return "this host's own address (an interface of the machine serve runs on: services bound to 0.0.0.0 answer there)"
	}
	if form, v4, ok := policy.CarriedV4(a); ok && p.isOwn(v4) {
		return form + " of " + v4.String() + ", this host's own address (an interface of the machine serve runs on)"
	}
	return ""
}

// isOwn reports whether a is one of this host's own addresses.
func (p *Proxy) isOwn(a netip.Addr) bool {
	if mutated("egress-own-addrs") {
		return false
	}
	p.ownMu.Lock()
	defer p.ownMu.Unlock()
	if p.own == nil || p.o.LocalAddrs == nil && time.Since(p.ownAt) > LocalAddrsRefresh {
		list := LocalAddrs
		if p.o.LocalAddrs != nil {
			list = p.o.LocalAddrs
		}
		p.own = map[netip.Addr]bool{}
		for _, x := range list() {
			p.own[x.Unmap().WithZone("")] = true
		}
		p.ownAt = time.Now()
	}
	return p.own[a.Unmap().WithZone("")]
}

// LocalAddrs is the default Options.LocalAddrs: every address of every interface of this host.
// An error leaves the list empty; the private and loopback ranges, where most of them lie, are
// denied anyway.
func LocalAddrs() []netip.Addr {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, a := range as {
		var ip net.IP
		switch x := a.(type) {
		case *net.IPNet:
			ip = x.IP
		case *net.IPAddr:
			ip = x.IP
		}
		if addr, ok := netip.AddrFromSlice(ip); ok {
			out = append(out, addr.Unmap())
		}
	}
	return out
}

// control re-checks the address the default dialer is about to connect to.
func (p *Proxy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("egress: refusing to connect to %q: not an address", address)
	}
	if why := p.denied(ap.Addr(), ap.Port()); why != "" {
		return fmt.Errorf("egress: refusing to connect to %s: %s", address, why)
	}
	return nil
}

// refuse answers the client with status and the reason, and audits the refusal.
func (p *Proxy) refuse(c net.Conn, d *Decision, status int, rule, why string) {
	target := hostPort(d.Host, d.Port)
	if d.Host == "" {
		target = "?"
	}
	body := fmt.Sprintf("mcpsandbox: egress to %s denied: %s\n", target, why)
	if status >= 500 {
		body = fmt.Sprintf("mcpsandbox: egress to %s failed: %s\n", target, why)
	}
	d.Allowed, d.Rule, d.Reason = false, rule, strings.TrimSpace(body)
	clipDecision(d) // the body the client gets is clipped as the audit's copy is
	body = d.Reason + "\n"
	p.tell(d)
	c.SetWriteDeadline(time.Now().Add(p.o.HeaderTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Mcpsandbox-Egress: denied\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
	p.emit(d)
}

// tell gives a refusal to Options.Denied before the client learns of it, so a call that ends
// on its 403 finds it named.
func (p *Proxy) tell(d *Decision) {
	if p.o.Denied != nil && !mutated("egress-denials-unsaid") {
		p.o.Denied(*d)
	}
}

// Record logs and audits a decision taken outside the proxy about one of its connections (the
// executor's bound across containers refuses a connection before the proxy sees it) exactly as
// the proxy's own: one by one up to Options.LogRate a second, then counted into a summary, so
// none goes unrecorded. It is safe to call until Close returns.
func (p *Proxy) Record(d Decision) { p.emit(&d) }

// emit logs and audits a decision: clipped (MaxLogHost, MaxLogReason), and one by one only
// up to Options.LogRate a second; the rest are counted into a summary (see logLimiter).
func (p *Proxy) emit(d *Decision) {
	level := slog.LevelInfo
	if d.Allowed {
		level = slog.LevelDebug
	}
	p.emitLevel(d, level)
}

func (p *Proxy) emitLevel(d *Decision, level slog.Level) {
	clipDecision(d)
	p.mu.Lock()
	ok, flush := p.lim.admit(d, time.Now(), func(after time.Duration) {
		var t *time.Timer
		t = time.AfterFunc(after, func() { p.flushTimer(&t) }) // *t is read under p.mu, set under it here
		p.lim.timer = t
	})
	p.mu.Unlock()
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	if flush != nil {
		p.write(flush, slog.LevelWarn)
	}
	if ok {
		p.write(d, level)
	}
}

// flush emits the summary of the decisions counted so far, if any. It holds emitMu from the
// take to the write, so Close's flush returns only after a summary the timer took is written
// (a summary taken but not yet audited when Close returned was lost).
func (p *Proxy) flush() { p.flushTimer(nil) }

// flushTimer is flush for the window's timer t (nil: Close's, unconditional). A timer that
// fired while a decision of the next window took its summary and armed another (late, under
// load) is stale: it takes nothing, or it took the new window's count early and dropped the
// new timer's reference, two summaries a window (TestDecisionLogBounded: 51 in 46 s).
func (p *Proxy) flushTimer(t **time.Timer) {
	p.emitMu.Lock()
	defer p.emitMu.Unlock()
	p.mu.Lock()
	if t != nil && p.lim.timer != *t && !mutated("egress-log-stale-timer") {
		p.mu.Unlock()
		return
	}
	p.lim.timer = nil
	s := p.lim.take(time.Now())
	p.mu.Unlock()
	if s != nil {
		p.write(s, slog.LevelWarn)
	}
}

func (p *Proxy) write(d *Decision, level slog.Level) {
	switch {
	case d.Rule == RuleLogRate:
		p.log.Log(context.Background(), level, "egress decisions summarised", "suppressed", d.Suppressed, "denied", d.SuppressedDenied, "allowed", d.SuppressedAllowed, "reason", d.Reason)
	case d.Allowed:
		p.log.Log(context.Background(), level, "egress allowed", "host", d.Host, "port", d.Port, "rule", d.Rule, "addr", d.Addr, "bytes_out", d.BytesOut, "bytes_in", d.BytesIn)
	default:
		p.log.Log(context.Background(), level, "egress denied", "host", d.Host, "port", d.Port, "rule", d.Rule, "reason", d.Reason)
	}
	if p.o.Audit != nil {
		p.o.Audit(*d)
	}
}

// relay copies bytes both ways until both directions end or one is idle for IdleTimeout.
// gate, if set, runs first on the client's side (while the upstream's bytes already flow):
// it returns the bytes it consumed, to be sent on, or a refusal that ends the tunnel.
func (p *Proxy) relay(c net.Conn, br *bufio.Reader, first []byte, up net.Conn, gate func(*bufio.Reader) ([]byte, *refusal)) (out, in int64, _ *refusal) {
	done := make(chan struct{})
	var refused atomic.Pointer[refusal]
	last := new(atomic.Int64) // either direction's last byte: a long one-way download is not idle
	last.Store(time.Now().UnixNano())
	go func() {
		defer close(done)
		var src io.Reader = &idleReader{r: br, c: c, idle: p.o.IdleTimeout, peer: up, last: last}
		if gate != nil {
			gb := bufio.NewReaderSize(src, maxRequestLine) // httpMethod peeks this far
			f, r := gate(gb)
			if r != nil {
				refused.Store(r)
				up.Close() // ends the other direction; the caller tells the client
				return
			}
			first, src = f, gb
		}
		n, _ := up.Write(first)
		m, _ := io.Copy(up, src)
		out = int64(n) + m
		closeWrite(up)
	}()
	in, _ = io.Copy(c, &idleReader{r: up, c: up, idle: p.o.IdleTimeout, peer: c, last: last})
	if refused.Load() == nil {
		closeWrite(c)
	}
	select {
	case <-done:
	case <-time.After(p.o.IdleTimeout):
	}
	if r := refused.Load(); r != nil {
		<-done            // it has closed up and returns
		return out, in, r // c stays open for the refusal; the handler closes it
	}
	c.Close()
	up.Close()
	<-done
	return out, in, refused.Load()
}

func closeWrite(c net.Conn) {
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite()
		return
	}
	c.Close()
}

// idleReader reads from r, allowing idle before each read on c (and before each write on
// peer). With last (a tunnel's two directions share it), a read that times out while the
// other direction moved bytes within idle waits on: only a tunnel silent both ways is idle.
type idleReader struct {
	r    io.Reader
	c    net.Conn
	peer net.Conn
	idle time.Duration
	last *atomic.Int64
}

func (i *idleReader) Read(b []byte) (int, error) {
	for {
		t := time.Now().Add(i.idle)
		i.c.SetReadDeadline(t)
		if i.peer != nil {
			i.peer.SetWriteDeadline(t)
		}
		n, err := i.r.Read(b)
		if i.last == nil {
			return n, err
		}
		if n > 0 {
			i.last.Store(time.Now().UnixNano())
			return n, err
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, i.last.Load())) < i.idle {
			continue
		}
		return n, err
	}
}

// countConn counts bytes and refreshes an idle deadline on every read and write.
type countConn struct {
	net.Conn
	idle          time.Duration
	read, written int64
}

func (c *countConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Read(b)
	c.read += int64(n)
	return n, err
}

func (c *countConn) Write(b []byte) (int, error) {
	c.Conn.SetWriteDeadline(time.Now().Add(c.idle))
	n, err := c.Conn.Write(b)
	c.written += int64(n)
	return n, err
}

var errHeadTooLarge = errors.New("request head too large")

// readHead reads a request head (through the blank line) of at most max bytes.
func readHead(br *bufio.Reader, max int) ([]byte, error) {
	var head []byte
	for {
		line, err := br.ReadSlice('\n')
		head = append(head, line...)
		if len(head) > max {
			return head, errHeadTooLarge
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			return head, err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 && len(head) > len(line) {
			return head, nil
		}
	}
}

// hostHeaders returns the values of every Host header in a request head (ReadRequest drops
// them for absolute-form requests, which is exactly where a mismatch hides).
func hostHeaders(head []byte) []string {
	var out []string
	lines := strings.Split(string(head), "\n")
	for _, ln := range lines[1:] {
		k, v, ok := strings.Cut(strings.TrimRight(ln, "\r"), ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "host") {
			out = append(out, strings.TrimSpace(v))
		}
	}
	return out
}

// splitHostPort parses "host:port" (IPv6 in brackets); def is the port when none is given
// (0 = a port is required). The host comes back lower-case, without brackets or trailing dot.
func splitHostPort(s string, def int) (string, int, error) {
	host, ps, err := net.SplitHostPort(s)
	if err != nil {
		if def == 0 || strings.Count(strings.Trim(s, "[]"), ":") > 0 && !strings.HasPrefix(s, "[") {
			return "", 0, fmt.Errorf("want host:port")
		}
		host, ps = strings.Trim(s, "[]"), strconv.Itoa(def)
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("port %q is not in 1..65535", ps)
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" {
		return "", 0, fmt.Errorf("empty host")
	}
	if ip, ok := parseIP(host); ok {
		host = ip.String()
	} else if i := strings.IndexFunc(host, notLDH); i >= 0 && !mutated("egress-host-any-bytes") {
		// no rule can name it (policy host rules are letters, digits, '-' and '.'), and what a
		// sandbox puts here is written to the operator's log: refused before any decision
		// about it, so it is never a decision's host (atk39 F8)
		return "", 0, fmt.Errorf("not a host name (letters, digits, '-', '_' and '.' only; an internationalised name in its xn-- form) nor an IP address")
	}
	return host, port, nil
}

// notLDH: r cannot be in a (lower-cased) host name a rule may list.
func notLDH(r rune) bool {
	return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '.' || r == '_')
}

func parseIP(host string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
