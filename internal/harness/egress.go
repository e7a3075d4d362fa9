package harness

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Network by name: the arena stands up an "allowed" and a "forbidden" host, each as an HTTP
// and an HTTPS server on loopback, and hands serve the stand-in hook (internal/testhooks, read
// by internal/serve/egress) mapping their names to exactly those ip:ports. The run's policy lists the
// allowed one (and the rebind name, see below); nothing lists the forbidden one. No traffic
// leaves the host: names resolve only through the hook. The hook exists only in a test build
// (-tags testhooks): in a release build the scenarios that need it are N/A (testhooks.NeedsTestBuild).
const (
	EgressAllowedHost   = "allowed.mcpsandbox.test"
	EgressForbiddenHost = "forbidden.mcpsandbox.test"
	// EgressRebindHost is listed (on the harness's TCP listener's port) but resolves to
	// 127.0.0.1 without its address being re-opened: a listed name that resolves to loopback.
	EgressRebindHost = "rebind.mcpsandbox.test"
)

// standIn is one stand-in server. Every connection is classified by what arrived first:
// a request (or TLS server name) for its own name counts as ok; one naming another host
// (Host header, SNI, or none) as fronted; bytes that are neither HTTP (http) nor TLS (https)
// as raw. conns counts every accepted connection.
type standIn struct {
	name               string
	tls                bool
	port               int
	conns, ok, fronted atomic.Int64
	raw                atomic.Int64
	mu                 sync.Mutex
	seen               []string
}

func (s *standIn) note(what string) {
	s.mu.Lock()
	if len(s.seen) < 8 {
		s.seen = append(s.seen, what)
	}
	s.mu.Unlock()
}

func (s *standIn) evidence() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.seen, "; ")
}

// egressArena is the arena's stand-in hosts.
type egressArena struct {
	allowedHTTP, allowedHTTPS, forbiddenHTTP, forbiddenHTTPS *standIn
}

// standInCert is a self-signed certificate for both stand-in names (clients skip verification:
// what is tested is where bytes go, not the PKI).
var standInCert = sync.OnceValues(func() (tls.Certificate, error) {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpsandbox harness stand-in"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		DNSNames:    []string{EgressAllowedHost, EgressForbiddenHost, EgressRebindHost},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		return tls.Certificate{}, err
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, nil
})

func (a *Arena) listenEgress() error {
	e := &egressArena{}
	for _, s := range []**standIn{&e.allowedHTTP, &e.allowedHTTPS, &e.forbiddenHTTP, &e.forbiddenHTTPS} {
		*s = &standIn{}
	}
	e.allowedHTTP.name, e.allowedHTTPS.name = EgressAllowedHost, EgressAllowedHost
	e.forbiddenHTTP.name, e.forbiddenHTTPS.name = EgressForbiddenHost, EgressForbiddenHost
	e.allowedHTTPS.tls, e.forbiddenHTTPS.tls = true, true
	for _, s := range []*standIn{e.allowedHTTP, e.allowedHTTPS, e.forbiddenHTTP, e.forbiddenHTTPS} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("harness egress stand-in %s: %w", s.name, err)
		}
		a.closers = append(a.closers, func() { ln.Close() })
		s.port = ln.Addr().(*net.TCPAddr).Port
		go s.serve(ln)
	}
	a.eg = e
	return nil
}

func (s *standIn) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s.conns.Add(1)
		go s.handle(c)
	}
}

// handle answers one connection (bounded: 5s, one request).
func (s *standIn) handle(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(c)
	first, err := br.Peek(1)
	if err != nil {
		return // connected and sent nothing: the connection itself is counted
	}
	var conn net.Conn = &peeked{Conn: c, r: br}
	if s.tls {
		if first[0] != 0x16 {
			s.raw.Add(1)
			s.note(fmt.Sprintf("non-TLS bytes %q", peek(br)))
			return
		}
		cert, err := standInCert()
		if err != nil {
			return
		}
		var sni string
		tc := tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert},
			GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) { sni = h.ServerName; return nil, nil }})
		if err := tc.Handshake(); err != nil {
			s.note("TLS handshake failed: " + err.Error())
			if sni != s.name {
				s.fronted.Add(1)
			}
			return
		}
		if sni != s.name {
			s.fronted.Add(1)
			s.note(fmt.Sprintf("TLS server name %q", sni))
		}
		conn, br = tc, bufio.NewReader(tc)
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		if !s.tls {
			s.raw.Add(1)
			s.note(fmt.Sprintf("not HTTP: %q", peek(br)))
		}
		return
	}
	host, _, _ := net.SplitHostPort(req.Host)
	if host == "" {
		host = req.Host
	}
	if strings.ToLower(host) == s.name && len(req.Header.Values("Host")) == 0 {
		s.ok.Add(1)
		s.note(fmt.Sprintf("request for %s", req.Host))
	} else {
		s.fronted.Add(1)
		s.note(fmt.Sprintf("request for Host %q", req.Host))
	}
	body := "stand-in " + s.name + " " + req.URL.Path + "\n"
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
}

func peek(br *bufio.Reader) []byte {
	b, _ := br.Peek(min(br.Buffered(), 32))
	return b
}

type peeked struct {
	net.Conn
	r *bufio.Reader
}

func (p *peeked) Read(b []byte) (int, error) { return p.r.Read(b) }

// StandIns is the stand-in hook's value (testhooks.StandInsEnv) for this arena's stand-ins: the allowed and
// forbidden names at their exact ports (re-opened), the rebind name at 127.0.0.1 (not).
func (a *Arena) StandIns() string {
	e := a.eg
	if e == nil {
		return ""
	}
	at := func(n string, s *standIn) string { return n + "=127.0.0.1:" + strconv.Itoa(s.port) }
	return strings.Join([]string{at(EgressAllowedHost, e.allowedHTTP), at(EgressAllowedHost, e.allowedHTTPS),
		at(EgressForbiddenHost, e.forbiddenHTTP), at(EgressForbiddenHost, e.forbiddenHTTPS), EgressRebindHost + "=127.0.0.1"}, ",")
}

// EgressListed is what the harness adds to a host list: the allowed stand-in's two ports and
// the rebind name on the TCP listener's port.
func (a *Arena) EgressListed() []string {
	e := a.eg
	if e == nil {
		return nil
	}
	return []string{EgressAllowedHost + ":" + strconv.Itoa(e.allowedHTTP.port), EgressAllowedHost + ":" + strconv.Itoa(e.allowedHTTPS.port),
		EgressRebindHost + ":" + strconv.Itoa(a.tcpPort)}
}

// EgressForbidden is the forbidden stand-in's two host:port entries (a widened list's).
func (a *Arena) EgressForbidden() []string {
	e := a.eg
	if e == nil {
		return nil
	}
	return []string{EgressForbiddenHost + ":" + strconv.Itoa(e.forbiddenHTTP.port), EgressForbiddenHost + ":" + strconv.Itoa(e.forbiddenHTTPS.port)}
}

// ForbiddenHits counts what reached the forbidden stand-in, plus what reached the allowed one
// in another host's name (Host header, TLS server name) or as bytes of no protocol it speaks.
func (a *Arena) ForbiddenHits() int64 {
	e := a.eg
	if e == nil {
		return 0
	}
	return e.forbiddenHTTP.conns.Load() + e.forbiddenHTTPS.conns.Load() +
		e.allowedHTTP.fronted.Load() + e.allowedHTTPS.fronted.Load() + e.allowedHTTP.raw.Load() + e.allowedHTTPS.raw.Load()
}

// AllowedHits counts the requests the allowed stand-in's HTTP and HTTPS servers answered in
// their own name.
func (a *Arena) AllowedHits() (plain, secure int64) {
	if a.eg == nil {
		return 0, 0
	}
	return a.eg.allowedHTTP.ok.Load(), a.eg.allowedHTTPS.ok.Load()
}

func checkForbiddenHost(r *run) (bool, string) {
	e := r.a.eg
	if e == nil {
		return false, "no stand-in hosts"
	}
	f := e.forbiddenHTTP.conns.Load() + e.forbiddenHTTPS.conns.Load()
	fr := e.allowedHTTP.fronted.Load() + e.allowedHTTPS.fronted.Load()
	raw := e.allowedHTTP.raw.Load() + e.allowedHTTPS.raw.Load()
	if f+fr+raw == 0 {
		return false, "0 connections reached the forbidden stand-in; the allowed one saw no request in another name and no foreign protocol"
	}
	var ev []string
	for _, s := range []*standIn{e.forbiddenHTTP, e.forbiddenHTTPS, e.allowedHTTP, e.allowedHTTPS} {
		if x := s.evidence(); x != "" {
			ev = append(ev, fmt.Sprintf("%s:%d: %s", s.name, s.port, x))
		}
	}
	return true, fmt.Sprintf("%d connection(s) reached the forbidden stand-in, %d request(s) reached the allowed one in another host's name, %d brought bytes of another protocol (%s)",
		f, fr, raw, strings.Join(ev, " | "))
}

func checkAllowedHost(r *run) (bool, string) {
	h, hs := r.a.AllowedHits()
	if h == 0 || hs == 0 {
		// a call killed at the timeout (a loaded host) never got to fetch: unproven, not broken
		r.mu.Lock()
		timedOut := slices.ContainsFunc(r.calls, func(c call) bool { return c.res.TimedOut })
		r.mu.Unlock()
		if timedOut {
			r.cutShort.Store(true)
			r.inconclusive(fmt.Sprintf("the listed stand-in answered %d http and %d https request(s), but the call timed out before it could fetch: re-run on a less loaded host or raise --max-timeout", h, hs))
			return false, "the fetch was cut short by the timeout"
		}
		return true, fmt.Sprintf("the listed stand-in answered %d http and %d https request(s) in its own name (want both > 0): the egress path to a listed host is broken, so 'contained' elsewhere would prove nothing", h, hs)
	}
	return false, fmt.Sprintf("the listed stand-in answered %d http and %d https request(s) through the proxy", h, hs)
}

// schemeNet is the `network` key of p's scheme; ok is false when the scheme has none.
func schemeNet(p *policy.Policy) (policy.Network, bool) {
	if sec := p.Section(); sec != nil {
		return sec.Network()
	}
	return policy.Network{}, false
}

// hostList says whether p's scheme's network key is a host list.
func hostList(p *policy.Policy) bool {
	n, ok := schemeNet(p)
	return ok && n.Mode == policy.NetHosts
}

// networkOpen says whether p's scheme reaches the network without a proxy (allowlist true,
// docker "host" or any docker network).
func networkOpen(p *policy.Policy) bool {
	n, ok := schemeNet(p)
	return ok && (n.Mode == policy.NetAll || n.Mode == policy.NetNamed)
}

// AddNetworkHosts makes p's network key a host list holding its current entries (if it is one)
// plus patterns. For schemes with a network key; the others have no host lists.
func AddNetworkHosts(p *policy.Policy, patterns ...string) error {
	n, ok := schemeNet(p)
	if !ok {
		return fmt.Errorf("the %s scheme has no network host lists", p.Scheme)
	}
	var cur []string
	for _, r := range n.Hosts() {
		cur = append(cur, r.Raw)
	}
	nn, err := policy.NetworkHosts(append(cur, patterns...)...)
	if err != nil {
		return err
	}
	p.Section().SetNetwork(nn)
	return nil
}

// SetNetworkHosts replaces p's network key by a host list of exactly patterns.
func SetNetworkHosts(p *policy.Policy, patterns ...string) error {
	if sec := p.Section(); sec != nil {
		sec.SetNetwork(policy.Network{Mode: policy.NetNone})
	}
	return AddNetworkHosts(p, patterns...)
}

// ListStandIns makes the run's network a host list naming the arena's allowed stand-in (and
// the rebind name), keeping what it already lists: what the harness does to every policy
// with a host list, for controls whose base has none.
func (a *Arena) ListStandIns(p *policy.Policy) error { return AddNetworkHosts(p, a.EgressListed()...) }

func (a *Arena) egPort(f func(*egressArena) *standIn) string {
	if a.eg == nil {
		return "0"
	}
	return strconv.Itoa(f(a.eg).port)
}

func needsHostList(p *policy.Policy) string {
	if _, ok := schemeNet(p); !ok {
		return fmt.Sprintf("needs a network host list: the %s scheme has none", p.Scheme)
	}
	return fmt.Sprintf("needs a network host list (%s.network = [\"host\", ...]); this policy's network is %s", p.Scheme, netString(p))
}

func netString(p *policy.Policy) string {
	if n, ok := schemeNet(p); ok {
		return n.String()
	}
	return "?"
}

// EgressControls are the network-by-name negative controls, for a scheme with host lists:
// the list widened to the forbidden stand-in, the proxy bypassed (open: the scheme's
// network-on weakness, described by openIs), and the list narrowed so the allowed stand-in's
// fetch never arrives. The controls' base policy has no host list: each makes its own.
func EgressControls(key, openIs string, open func(*policy.Policy, *Arena) error) []Control {
	return []Control{
		{Detector: "forbidden_host", Scenario: "egress-unlisted-host", Kind: "policy",
			Weakness: key + " lists the forbidden stand-in too (the list widened)",
			Mutate: func(p *policy.Policy, a *Arena) error {
				return AddNetworkHosts(p, append(a.EgressListed(), a.EgressForbidden()...)...)
			}},
		{Detector: "forbidden_host", Scenario: "egress-bypass-direct", Kind: "policy",
			Weakness: openIs + " (the proxy bypassed: no list, no proxy)", Mutate: open},
		{Detector: "allowed_host", Scenario: "egress-listed-host", Kind: "policy",
			Weakness: key + " lists another name only (the allowed stand-in's fetch is refused, as through a broken proxy)",
			Mutate:   func(p *policy.Policy, a *Arena) error { return SetNetworkHosts(p, "nothing.mcpsandbox.test") }},
	}
}
