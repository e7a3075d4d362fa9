// Package egress is serve's egress proxy: an HTTP CONNECT and plain-HTTP forward proxy that lets
// a sandbox reach exactly the hosts a policy's `network` list names, and nothing else.
//
// The proxy resolves names itself (the sandbox has no resolver of its own), refuses IP literals
// unless a rule names that address, checks every address it is about to connect to against
// ranges that are never reachable (cloud metadata, loopback, private, link-local, CGNAT,
// multicast: see policy.DeniedAddr) at connect time, so a listed name that resolves or rebinds
// to one of them gets nowhere, refuses a CONNECT whose TLS server name (SNI) is not the CONNECT
// host (domain fronting) or that carries no TLS at all, and refuses a plain-HTTP request whose
// Host header is not its URL's host. Every decision goes to Options.Audit; a refusal answered
// before a tunnel opens is a 403 whose body names the rule. Pure Go, no OS-specific code.
package egress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
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
	// Logger gets a line per decision (default: discard).
	Logger *slog.Logger
	// AllowLoopback re-opens 127.0.0.0/8 and ::1 — for tests only, whose "remote" servers run
	// on loopback. Every other denied range stays denied.
	AllowLoopback bool
	// AllowAddrs re-opens exact addresses (ip:port) in the denied ranges: for tests and the
	// harness, whose stand-in hosts listen on loopback, while every other loopback port (the
	// harness's own listeners) stays denied.
	AllowAddrs []netip.AddrPort
	// MaxConns bounds connections handled at once, tunnels included (default 64); more are
	// answered 503.
	MaxConns int
	// MaxHeaderBytes bounds a request's head (default 16 KiB); more is answered 431.
	MaxHeaderBytes int
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
	Time    time.Time `json:"time"`
	Client  string    `json:"client,omitempty"` // the sandbox side's address as the proxy saw it
	Method  string    `json:"method"`           // CONNECT, GET, ...
	Host    string    `json:"host"`
	Port    int       `json:"port"`
	Addr    string    `json:"addr,omitempty"` // the address connected to
	Allowed bool      `json:"allowed"`
	// Rule is the host rule that allowed the request (as canonically written, e.g. "pypi.org"),
	// or the check that refused it: the policy key (not listed), or one of RuleDeniedAddr,
	// RuleSNI, RuleNotTLS, RuleHostHeader, RuleBadRequest, RuleLimit, RuleUpstream.
	Rule     string        `json:"rule"`
	Reason   string        `json:"reason,omitempty"`    // a refusal's sentence (the 403 body)
	BytesOut int64         `json:"bytes_out,omitempty"` // sandbox -> host
	BytesIn  int64         `json:"bytes_in,omitempty"`  // host -> sandbox
	Duration time.Duration `json:"duration_ns,omitempty"`
}

// Rules that refuse besides the policy key.
const (
	RuleDeniedAddr = "denied-address" // the host resolves only to never-reachable addresses
	RuleSNI        = "tls-sni"        // TLS server name absent or not the CONNECT host
	RuleNotTLS     = "not-tls"        // a CONNECT tunnel that does not start with a TLS ClientHello
	RuleHostHeader = "host-header"    // plain HTTP whose Host header is not the URL's host
	RuleBadRequest = "bad-request"    // not a proxy request
	RuleLimit      = "limit"          // too many connections, head too large or too slow
	RuleUpstream   = "upstream"       // listed, but resolving or connecting failed
)

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
	p := &Proxy{rules: append([]policy.HostRule(nil), rules...), o: o, log: o.Logger,
		sem: make(chan struct{}, o.MaxConns), lns: map[net.Listener]bool{}, conns: map[net.Conn]bool{}}
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
	select {
	case p.sem <- struct{}{}:
		defer func() { <-p.sem }()
	default:
		d.Method = "?"
		p.refuse(c, &d, http.StatusServiceUnavailable, RuleLimit,
			fmt.Sprintf("too many egress connections at once (%d): retry later", p.o.MaxConns))
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

// connect handles CONNECT host:port: check, resolve, connect, answer 200, read the TLS
// ClientHello and check its server name, then relay bytes both ways.
func (p *Proxy) connect(c net.Conn, br *bufio.Reader, req *http.Request, d *Decision) {
	host, port, err := splitHostPort(req.RequestURI, 0)
	if err != nil {
		p.refuse(c, d, http.StatusBadRequest, RuleBadRequest, fmt.Sprintf("CONNECT target %q: %v", req.RequestURI, err))
		return
	}
	d.Host, d.Port = host, port
	up, ok := p.open(c, d)
	if !ok {
		return
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	c.SetReadDeadline(time.Now().Add(p.o.HeaderTimeout))
	sni, hello, err := readClientHello(br)
	if err != nil {
		p.deny(d, RuleNotTLS, fmt.Sprintf("the tunnel to %s did not start with a TLS ClientHello (%v): CONNECT carries TLS only; use an http:// URL through the proxy for plain HTTP", hostPort(host, port), err))
		return
	}
	_, isIP := parseIP(host)
	switch {
	case sni == "" && !isIP:
		p.deny(d, RuleSNI, fmt.Sprintf("the TLS ClientHello to %s names no server (SNI): the name checked must be the name used", hostPort(host, port)))
		return
	case sni != "" && sni != host:
		p.deny(d, RuleSNI, fmt.Sprintf("TLS server name %q differs from the CONNECT host %q (domain fronting)", sni, host))
		return
	}
	c.SetReadDeadline(time.Time{})
	start := time.Now()
	out, in := p.relay(c, br, hello, up)
	d.Allowed, d.BytesOut, d.BytesIn, d.Duration = true, out, in, time.Since(start)
	p.emit(d)
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
	up, ok := p.open(c, d)
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
	resp, err := http.ReadResponse(bufio.NewReader(cu), req)
	if err != nil {
		p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("reading the answer of %s: %v", hostPort(host, port), err))
		return
	}
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
func (p *Proxy) open(c net.Conn, d *Decision) (net.Conn, bool) {
	host, port := d.Host, d.Port
	target := hostPort(host, port)
	var matched policy.HostRule
	listed := false
	for _, r := range p.rules {
		if r.Matches(host, port) {
			matched, listed = r, true
			break
		}
	}
	if !listed {
		p.refuse(c, d, http.StatusForbidden, p.o.Key, p.notListed(host, port))
		return nil, false
	}
	d.Rule = matched.String()
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
			return nil, false
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
		return up, true
	}
	if tried == 0 || lastErr == nil {
		d.Rule = RuleDeniedAddr
		p.refuse(c, d, http.StatusForbidden, RuleDeniedAddr, fmt.Sprintf("%s resolves to %s, which is never reachable (cloud metadata, loopback and private ranges are always denied, whatever %s lists)", host, strings.Join(denied, "; "), p.o.Key))
		return nil, false
	}
	p.refuse(c, d, http.StatusBadGateway, RuleUpstream, fmt.Sprintf("%s is listed (%s) but connecting failed: %v", target, matched, lastErr))
	return nil, false
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
	if p.o.AllowLoopback && policy.IsLoopback(a) {
		return ""
	}
	for _, x := range p.o.AllowAddrs {
		if x.Addr().Unmap() == a && x.Port() == port {
			return ""
		}
	}
	return policy.DeniedAddr(a)
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
	c.SetWriteDeadline(time.Now().Add(p.o.HeaderTimeout))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Mcpsandbox-Egress: denied\r\n\r\n%s",
		status, http.StatusText(status), len(body), body)
	p.deny(d, rule, strings.TrimSpace(body))
}

// deny audits a refusal.
func (p *Proxy) deny(d *Decision, rule, why string) {
	d.Allowed, d.Rule, d.Reason = false, rule, why
	p.emit(d)
}

func (p *Proxy) emit(d *Decision) {
	if d.Allowed {
		p.log.Debug("egress allowed", "host", d.Host, "port", d.Port, "rule", d.Rule, "addr", d.Addr, "bytes_out", d.BytesOut, "bytes_in", d.BytesIn)
	} else {
		p.log.Info("egress denied", "host", d.Host, "port", d.Port, "rule", d.Rule, "reason", d.Reason)
	}
	if p.o.Audit != nil {
		p.o.Audit(*d)
	}
}

// relay copies bytes both ways until both directions end or one is idle for IdleTimeout.
func (p *Proxy) relay(c net.Conn, br *bufio.Reader, first []byte, up net.Conn) (out, in int64) {
	done := make(chan struct{})
	last := new(atomic.Int64) // either direction's last byte: a long one-way download is not idle
	last.Store(time.Now().UnixNano())
	go func() {
		defer close(done)
		n, _ := up.Write(first)
		m, _ := io.Copy(up, &idleReader{r: br, c: c, idle: p.o.IdleTimeout, peer: up, last: last})
		out = int64(n) + m
		closeWrite(up)
	}()
	in, _ = io.Copy(c, &idleReader{r: up, c: up, idle: p.o.IdleTimeout, peer: c, last: last})
	closeWrite(c)
	select {
	case <-done:
	case <-time.After(p.o.IdleTimeout):
	}
	c.Close()
	up.Close()
	<-done
	return out, in
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
	}
	return host, port, nil
}

func parseIP(host string) (netip.Addr, bool) {
	ip, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil || ip.Zone() != "" {
		return netip.Addr{}, false
	}
	return ip.Unmap(), true
}

func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }
