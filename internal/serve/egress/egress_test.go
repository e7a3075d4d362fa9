package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// No test here sends a byte beyond loopback: the "remote" hosts are local servers, and names
// map to them through a resolver the test controls.

// counted is a local server standing in for a remote host, with a request counter that is
// the detector: the forbidden server's must stay 0.
type counted struct {
	srv  *httptest.Server
	hits atomic.Int64
	port int
}

func newServer(t testing.TB, tlsOn bool) *counted {
	t.Helper()
	c := &counted{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.hits.Add(1)
		fmt.Fprintf(w, "hello from %s %s", r.Host, r.URL.Path)
	})
	if tlsOn {
		c.srv = httptest.NewTLSServer(h)
	} else {
		c.srv = httptest.NewServer(h)
	}
	t.Cleanup(c.srv.Close)
	c.port = c.srv.Listener.Addr().(*net.TCPAddr).Port
	return c
}

// mapResolver answers from a map and counts lookups; unknown names do not resolve.
type mapResolver struct {
	mu      sync.Mutex
	m       map[string][]netip.Addr
	lookups int
}

func (r *mapResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if a, ok := r.m[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

var lo = []netip.Addr{netip.MustParseAddr("127.0.0.1")}

func rules(t testing.TB, patterns ...string) []policy.HostRule {
	t.Helper()
	var out []policy.HostRule
	for _, s := range patterns {
		r, err := policy.ParseHostRule(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

type fixture struct {
	proxy *Proxy
	url   *url.URL
	mu    sync.Mutex
	audit []Decision
}

func startProxy(t testing.TB, rs []policy.HostRule, o Options) *fixture {
	t.Helper()
	f := &fixture{}
	o.Audit = func(d Decision) {
		f.mu.Lock()
		f.audit = append(f.audit, d)
		f.mu.Unlock()
	}
	if o.Key == "" {
		o.Key = "docker.network"
	}
	f.proxy = New(rs, o)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- f.proxy.Serve(l) }()
	t.Cleanup(func() {
		f.proxy.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("Serve returned %v after Close, want ErrClosed", err)
		}
	})
	f.url = &url.URL{Scheme: "http", Host: l.Addr().String()}
	return f
}

func (f *fixture) decisions() []Decision {
	// a decision is emitted when its connection ends; wait (bounded) for handlers to finish
	for i := 0; i < 200; i++ {
		f.proxy.mu.Lock()
		n := len(f.proxy.conns)
		f.proxy.mu.Unlock()
		if n == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Decision(nil), f.audit...)
}

func (f *fixture) client() *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy: http.ProxyURL(f.url),
		// the test servers' certificate names example.com; SNI is still the URL's host
		TLSClientConfig:   &tls.Config{InsecureSkipVerify: true},
		DisableKeepAlives: true,
	}}
}

func get(t *testing.T, c *http.Client, u string) (int, string, error) {
	t.Helper()
	resp, err := c.Get(u)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), nil
}

// rawConnect sends CONNECT target and returns the status line, the response and the conn.
func rawConnect(t *testing.T, proxy *url.URL, target string) (*http.Response, net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.DialTimeout("tcp", proxy.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		t.Fatal(err)
	}
	return resp, c, br
}

// toPort is a Dial that connects to 127.0.0.1:port whatever it is asked for: a rule without a
// port (which allows 443 and wants TLS there) can then reach a test server on any port.
func toPort(port string) func(ctx context.Context, n, _ string) (net.Conn, error) {
	return func(ctx context.Context, n, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, n, "127.0.0.1:"+port)
	}
}

func body(r *http.Response) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// A listed name reaches its server; an unlisted one is 403 with the rule named, and the
// forbidden server never sees a request. Negative control: list it, and its counter fires.
func TestListedAndUnlisted(t *testing.T) {
	allowed, forbidden := newServer(t, true), newServer(t, true)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo, "forbidden.test": lo}}
	f := startProxy(t, rules(t, "allowed.test:"+strconv.Itoa(allowed.port)), Options{Resolver: res, TestOnlyAllowLoopback: true})

	code, text, err := get(t, f.client(), fmt.Sprintf("https://allowed.test:%d/simple/", allowed.port))
	if err != nil || code != 200 || !strings.Contains(text, "hello from allowed.test") {
		t.Fatalf("listed host: %d %q %v", code, text, err)
	}
	if allowed.hits.Load() != 1 {
		t.Errorf("allowed server hits = %d, want 1", allowed.hits.Load())
	}

	target := fmt.Sprintf("forbidden.test:%d", forbidden.port)
	resp, _, _ := rawConnect(t, f.url, target)
	b := body(resp)
	want := fmt.Sprintf(`mcpsandbox: egress to %s denied: not in docker.network (add "forbidden.test:%d" to allow it)`, target, forbidden.port)
	if resp.StatusCode != 403 || strings.TrimSpace(b) != want {
		t.Errorf("unlisted CONNECT: %d %q, want 403 %q", resp.StatusCode, b, want)
	}
	if _, _, err := get(t, f.client(), "https://"+target+"/"); err == nil {
		t.Error("unlisted host fetched through the proxy")
	}
	if n := forbidden.hits.Load(); n != 0 {
		t.Errorf("forbidden server saw %d requests, want 0", n)
	}
	ds := f.decisions()
	var allowedD, deniedD int
	for _, d := range ds {
		switch {
		case d.Allowed && d.Host == "allowed.test" && d.Rule == "allowed.test:"+strconv.Itoa(allowed.port) && d.BytesIn > 0 && d.BytesOut > 0:
			allowedD++
		case !d.Allowed && d.Host == "forbidden.test" && d.Port == forbidden.port && d.Rule == "docker.network" && strings.Contains(d.Reason, "not in docker.network"):
			deniedD++
		}
	}
	if allowedD != 1 || deniedD != 2 {
		t.Errorf("audit: %d allowed, %d denied decisions, want 1 and 2: %+v", allowedD, deniedD, ds)
	}

	// negative control: the same fetch with forbidden.test listed reaches it
	g := startProxy(t, rules(t, "forbidden.test:"+strconv.Itoa(forbidden.port)), Options{Resolver: res, TestOnlyAllowLoopback: true})
	if code, _, err := get(t, g.client(), "https://"+target+"/"); err != nil || code != 200 || forbidden.hits.Load() != 1 {
		t.Errorf("control: listed forbidden.test: %d %v, hits %d (the counter must fire)", code, err, forbidden.hits.Load())
	}
}

// A listed name whose port is not listed is refused, naming the entry to add.
func TestPortNotListed(t *testing.T) {
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, TestOnlyAllowLoopback: true})
	resp, _, _ := rawConnect(t, f.url, "allowed.test:22")
	if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, `port 22 is not allowed for allowed.test by docker.network (add "allowed.test:22" to allow it)`) {
		t.Errorf("port 22: %d %q", resp.StatusCode, b)
	}
	if res.lookups != 0 {
		t.Errorf("an unlisted target was resolved (%d lookups): names not listed must not reach DNS", res.lookups)
	}
}

// IP literals are refused unless a rule names that exact address; the refusal happens
// before any connect.
func TestIPLiteral(t *testing.T) {
	forbidden := newServer(t, true)
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: &mapResolver{}, TestOnlyAllowLoopback: true})
	target := fmt.Sprintf("127.0.0.1:%d", forbidden.port)
	resp, _, _ := rawConnect(t, f.url, target)
	if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "IP address not in docker.network") {
		t.Errorf("IP literal: %d %q", resp.StatusCode, b)
	}
	if _, _, err := get(t, f.client(), "https://"+target+"/"); err == nil {
		t.Error("IP literal fetched")
	}
	if n := forbidden.hits.Load(); n != 0 {
		t.Errorf("forbidden server saw %d requests, want 0", n)
	}
	// negative control: a rule naming the address exactly (built by hand: the policy refuses
	// loopback literals, tests re-open loopback) lets it through
	ip := netip.MustParseAddr("127.0.0.1")
	g := startProxy(t, []policy.HostRule{{Raw: "127.0.0.1", Pattern: ip.String(), IP: ip, Port: forbidden.port}}, Options{Resolver: &mapResolver{}, TestOnlyAllowLoopback: true})
	if code, _, err := get(t, g.client(), "https://"+target+"/"); err != nil || code != 200 || forbidden.hits.Load() != 1 {
		t.Errorf("control: listed literal: %d %v hits %d", code, err, forbidden.hits.Load())
	}
}

// Loopback is denied by default even for a listed name that resolves to it, and so are
// metadata and private addresses; nothing is dialled.
func TestDeniedAddresses(t *testing.T) {
	allowed := newServer(t, true)
	port := strconv.Itoa(allowed.port)
	// the detector: dial attempts; it never really dials, so even a broken proxy sends
	// nothing beyond loopback
	var dials atomic.Int64
	dial := func(ctx context.Context, n, a string) (net.Conn, error) {
		dials.Add(1)
		return nil, fmt.Errorf("test: dial to %s refused by the test", a)
	}
	for _, c := range []struct {
		addrs []string
		want  string
	}{
		{[]string{"127.0.0.1"}, "loopback (127.0.0.0/8)"},
		{[]string{"169.254.169.254"}, "cloud metadata"},
		{[]string{"fd00:ec2::254"}, "cloud metadata (fd00:ec2::254)"},
		{[]string{"10.0.0.1", "192.168.1.1"}, "private (10.0.0.0/8); 192.168.1.1, private (192.168.0.0/16)"},
		{[]string{"::ffff:169.254.169.254"}, "link-local / cloud metadata"},
		{[]string{"100.64.0.1"}, "CGNAT"},
	} {
		var as []netip.Addr
		for _, s := range c.addrs {
			as = append(as, netip.MustParseAddr(s))
		}
		f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": as}}, Dial: dial})
		resp, _, _ := rawConnect(t, f.url, "allowed.test:"+port)
		b := body(resp)
		if resp.StatusCode != 403 || !strings.Contains(b, "allowed.test resolves to ") || !strings.Contains(b, c.want) {
			t.Errorf("%v: %d %q, want 403 naming %q", c.addrs, resp.StatusCode, b, c.want)
		}
		if ds := f.decisions(); len(ds) != 1 || ds[0].Allowed || ds[0].Rule != RuleDeniedAddr {
			t.Errorf("%v: audit %+v", c.addrs, ds)
		}
	}
	if dials.Load() != 0 || allowed.hits.Load() != 0 {
		t.Errorf("denied addresses: %d dials, %d hits, want 0 and 0", dials.Load(), allowed.hits.Load())
	}
	// a name resolving to a denied and an allowed address: only the allowed one is dialled
	var got []string
	var mu sync.Mutex
	rec := func(ctx context.Context, n, a string) (net.Conn, error) {
		mu.Lock()
		got = append(got, a)
		mu.Unlock()
		return (&net.Dialer{}).DialContext(ctx, n, a)
	}
	mixed := []netip.Addr{netip.MustParseAddr("169.254.169.254"), lo[0]}
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": mixed}}, Dial: rec, TestOnlyAllowLoopback: true})
	if code, _, err := get(t, f.client(), "https://allowed.test:"+port+"/"); err != nil || code != 200 {
		t.Fatalf("mixed: %d %v", code, err)
	}
	if len(got) != 1 || got[0] != "127.0.0.1:"+port {
		t.Errorf("mixed resolution dialled %v, want only 127.0.0.1:%s", got, port)
	}
}

// The address is checked again on the connection Dial returns (DNS rebinding, a dialer that
// goes elsewhere), and the default dialer refuses denied addresses at connect time.
func TestCheckedAtConnect(t *testing.T) {
	allowed := newServer(t, true)
	port := strconv.Itoa(allowed.port)
	// the resolver says a public address; the dialer (standing in for whatever the network
	// did) ends up on loopback: refused after the connect, no byte sent
	sneaky := func(ctx context.Context, n, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, n, "127.0.0.1:"+port)
	}
	pub := []netip.Addr{netip.MustParseAddr("203.0.113.7")}
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": pub}}, Dial: sneaky})
	resp, _, _ := rawConnect(t, f.url, "allowed.test:"+port)
	if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "127.0.0.1, loopback") {
		t.Errorf("rebound connection: %d %q", resp.StatusCode, b)
	}
	if allowed.hits.Load() != 0 {
		t.Errorf("rebound connection reached the server")
	}
	// the default dialer's Control refuses a denied address even if asked for it directly
	p := New(nil, Options{})
	if _, err := p.o.Dial(context.Background(), "tcp", "127.0.0.1:"+port); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("default dialer to loopback: %v", err)
	}
	if allowed.hits.Load() != 0 {
		t.Errorf("default dialer reached the server")
	}
	// negative control: with loopback re-opened the same dial connects
	q := New(nil, Options{TestOnlyAllowLoopback: true})
	c, err := q.o.Dial(context.Background(), "tcp", "127.0.0.1:"+port)
	if err != nil {
		t.Fatalf("control: %v", err)
	}
	c.Close()
}

// A CONNECT whose TLS server name is not the CONNECT host is cut before a byte reaches
// upstream (domain fronting); a tunnel with no TLS is cut too.
func TestSNIAndProtocol(t *testing.T) {
	// upstream is a raw TCP listener counting the bytes it receives: the detector
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var got atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 4096)
				for {
					n, err := c.Read(b)
					got.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	// a rule without a port: CONNECT to 443 must carry TLS (the dialer takes it to the detector)
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, TestOnlyAllowLoopback: true, HeaderTimeout: 2 * time.Second, Dial: toPort(port)})

	tunnel := func(send func(c net.Conn)) {
		resp, c, _ := rawConnect(t, f.url, "allowed.test:443")
		if resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %d", resp.StatusCode)
		}
		send(c)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c) // the proxy closes the tunnel
		c.Close()
	}
	hello := func(name string) func(net.Conn) {
		return func(c net.Conn) {
			tc := tls.Client(c, &tls.Config{ServerName: name, InsecureSkipVerify: true})
			tc.SetDeadline(time.Now().Add(5 * time.Second))
			tc.Handshake() // fails: the proxy cuts it, or the raw upstream never answers
		}
	}
	tunnel(hello("evil.test"))
	tunnel(func(c net.Conn) { io.WriteString(c, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n") })
	tunnel(func(c net.Conn) { io.WriteString(c, "SSH-2.0-OpenSSH_9.2\r\n") })
	ds := f.decisions()
	if n := got.Load(); n != 0 {
		t.Errorf("upstream received %d bytes through refused tunnels, want 0", n)
	}
	var sni, nottls int
	for _, d := range ds {
		switch {
		case !d.Allowed && d.Rule == RuleSNI && strings.Contains(d.Reason, `TLS server name "evil.test" differs from the CONNECT host "allowed.test"`):
			sni++
		case !d.Allowed && d.Rule == RuleNotTLS && strings.Contains(d.Reason, "did not start with a TLS ClientHello"):
			nottls++
		}
	}
	if sni != 1 || nottls != 2 {
		t.Errorf("audit: %d SNI, %d not-TLS refusals, want 1 and 2: %+v", sni, nottls, ds)
	}
	// negative control: a ClientHello naming the CONNECT host passes, and the detector fires
	resp, c, _ := rawConnect(t, f.url, "allowed.test:443")
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	go tls.Client(c, &tls.Config{ServerName: "allowed.test", InsecureSkipVerify: true}).Handshake()
	for i := 0; i < 500 && got.Load() == 0; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	c.Close()
	if got.Load() == 0 {
		t.Error("control: a matching ClientHello did not reach upstream (the byte counter must fire)")
	}
}

// Plain HTTP: a listed URL is forwarded; a Host header naming another host is refused, as
// is an unlisted URL.
func TestPlainHTTP(t *testing.T) {
	allowed, forbidden := newServer(t, false), newServer(t, false)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo, "forbidden.test": lo}}
	ap, fp := strconv.Itoa(allowed.port), strconv.Itoa(forbidden.port)
	f := startProxy(t, rules(t, "allowed.test:"+ap), Options{Resolver: res, TestOnlyAllowLoopback: true})
	code, text, err := get(t, f.client(), "http://allowed.test:"+ap+"/simple/pip/")
	if err != nil || code != 200 || text != "hello from allowed.test:"+ap+" /simple/pip/" {
		t.Fatalf("plain listed: %d %q %v", code, text, err)
	}
	raw := func(req string) (int, string) {
		c, err := net.Dial("tcp", f.url.Host)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		io.WriteString(c, req)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body(resp)
	}
	// Host header fronting: the URL names the listed host, the Host header the forbidden one
	code, b := raw("GET http://allowed.test:" + ap + "/ HTTP/1.1\r\nHost: forbidden.test:" + fp + "\r\n\r\n")
	if code != 403 || !strings.Contains(b, `Host header "forbidden.test:`+fp+`" differs from the request URL's host "allowed.test:`+ap+`"`) {
		t.Errorf("Host mismatch: %d %q", code, b)
	}
	code, b = raw("GET http://allowed.test:" + ap + "/ HTTP/1.1\r\nHost: allowed.test:" + ap + "\r\nHost: forbidden.test\r\n\r\n")
	if code != 400 || !strings.Contains(b, "too many Host headers") {
		t.Errorf("two Host headers: %d %q", code, b)
	}
	code, b = raw("GET http://forbidden.test:" + fp + "/ HTTP/1.1\r\nHost: forbidden.test:" + fp + "\r\n\r\n")
	if code != 403 || !strings.Contains(b, "not in docker.network") {
		t.Errorf("plain unlisted: %d %q", code, b)
	}
	code, b = raw("GET / HTTP/1.1\r\nHost: allowed.test:" + ap + "\r\n\r\n")
	if code != 400 || !strings.Contains(b, "send absolute http:// URLs") {
		t.Errorf("origin-form: %d %q", code, b)
	}
	if forbidden.hits.Load() != 0 || allowed.hits.Load() != 1 {
		t.Errorf("hits: forbidden %d (want 0), allowed %d (want 1)", forbidden.hits.Load(), allowed.hits.Load())
	}
	// negative control: the same raw request with matching Host reaches the server
	if code, _ := raw("GET http://allowed.test:" + ap + "/ HTTP/1.1\r\nHost: allowed.test:" + ap + "\r\n\r\n"); code != 200 || allowed.hits.Load() != 2 {
		t.Errorf("control: %d hits %d", code, allowed.hits.Load())
	}
}

// Bounds: a head too large is 431, too many connections 503, a silent client is dropped.
func TestLimits(t *testing.T) {
	allowed := newServer(t, true)
	port := strconv.Itoa(allowed.port)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	// a rule without a port: the tunnel on 443 waits HeaderTimeout for its ClientHello
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, TestOnlyAllowLoopback: true, MaxConns: 1, MaxHeaderBytes: 1024, HeaderTimeout: 300 * time.Millisecond, Dial: toPort(port), Scope: "call"})

	c, err := net.Dial("tcp", f.url.Host)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(c, "CONNECT allowed.test:443 HTTP/1.1\r\nX-Pad: "+strings.Repeat("a", 2000)+"\r\n\r\n")
	c.SetDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != 431 {
		t.Errorf("large head: %v %v", resp, err)
	}
	c.Close()
	f.decisions()

	// one tunnel open (waiting for its ClientHello) holds the only slot
	_, hold, _ := rawConnect(t, f.url, "allowed.test:443")
	resp2, _, _ := rawConnect(t, f.url, "allowed.test:443")
	if b := body(resp2); resp2.StatusCode != 503 || !strings.Contains(b, "too many egress connections at once: at most 1 per call (the egress connection bound)") {
		t.Errorf("second connection: %d %q", resp2.StatusCode, b)
	}
	// the silent tunnel is dropped after HeaderTimeout: reading it ends
	hold.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, hold); err != nil {
		t.Errorf("silent tunnel not closed by the proxy: %v", err)
	}
	// a client that sends nothing at all is dropped too
	s, err := net.Dial("tcp", f.url.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.SetReadDeadline(time.Now().Add(10 * time.Second))
	if n, err := io.Copy(io.Discard, s); err != nil || n != 0 {
		t.Errorf("silent client: read %d, %v (want a clean close)", n, err)
	}
	// the 503 is audited under rule "limit", naming the bound
	var limit int
	for _, d := range f.decisions() {
		if !d.Allowed && d.Rule == RuleLimit && strings.Contains(d.Reason, "at most 1 per call (the egress connection bound)") {
			limit++
		}
	}
	if limit != 1 {
		t.Errorf("%d audited connection-bound refusals, want 1", limit)
	}
}

// Close ends tunnels in progress and Serve.
func TestCloseEndsTunnels(t *testing.T) {
	allowed := newServer(t, true)
	port := strconv.Itoa(allowed.port)
	p := New(rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}, TestOnlyAllowLoopback: true})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.Serve(l) }()
	_, c, _ := rawConnect(t, &url.URL{Host: l.Addr().String()}, "allowed.test:"+port)
	tc := tls.Client(c, &tls.Config{ServerName: "allowed.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	p.Close()
	if err := <-done; err != ErrClosed {
		t.Errorf("Serve: %v", err)
	}
	tc.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := tc.Read(make([]byte, 1)); err == nil {
		t.Error("tunnel still open after Close")
	}
}

// A long one-way download (the client silent after its request) is not idle while bytes
// flow; a tunnel silent both ways is closed.
func TestIdleIsBothWays(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		for i := 0; i < 8; i++ {
			if r.Context().Err() != nil {
				return // like many servers: a client that closed its side is gone
			}
			fmt.Fprintf(w, "chunk %d\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: res, TestOnlyAllowLoopback: true, IdleTimeout: 300 * time.Millisecond})
	code, text, err := get(t, f.client(), "https://allowed.test:"+port+"/slow")
	if err != nil || code != 200 || strings.Count(text, "chunk") != 8 {
		t.Errorf("slow one-way download (800ms, idle timeout 300ms): %d %v, %d chunks", code, err, strings.Count(text, "chunk"))
	}
	// silent both ways: the tunnel ends
	_, c, _ := rawConnect(t, f.url, "allowed.test:"+port)
	tc := tls.Client(c, &tls.Config{ServerName: "allowed.test", InsecureSkipVerify: true})
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	tc.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := tc.Read(make([]byte, 1)); err == nil || strings.Contains(err.Error(), "timeout") {
		t.Errorf("a tunnel silent both ways was not closed by the proxy: %v", err)
	}
}

// TestOnlyAllowAddrs re-opens exactly the stand-in servers' ip:port; another loopback port (a harness
// listener) stays denied even for a listed name.
func TestAllowAddrs(t *testing.T) {
	allowed, other := newServer(t, true), newServer(t, true)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo, "other.test": lo}}
	ap := netip.AddrPortFrom(lo[0], uint16(allowed.port))
	f := startProxy(t, rules(t, "allowed.test:"+strconv.Itoa(allowed.port), "other.test:"+strconv.Itoa(other.port)),
		Options{Resolver: res, TestOnlyAllowAddrs: []netip.AddrPort{ap}})
	if code, _, err := get(t, f.client(), fmt.Sprintf("https://allowed.test:%d/", allowed.port)); err != nil || code != 200 {
		t.Errorf("re-opened address: %d %v", code, err)
	}
	resp, _, _ := rawConnect(t, f.url, fmt.Sprintf("other.test:%d", other.port))
	if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "loopback") {
		t.Errorf("another loopback port: %d %q", resp.StatusCode, b)
	}
	if other.hits.Load() != 0 || allowed.hits.Load() != 1 {
		t.Errorf("hits: other %d (want 0), allowed %d (want 1)", other.hits.Load(), allowed.hits.Load())
	}
}

// ServeConn takes any net.Conn (the allowlist helper relays unix connections): one whose
// remote address is nil is served too.
func TestServeConnAnyConn(t *testing.T) {
	allowed := newServer(t, false)
	port := strconv.Itoa(allowed.port)
	var got []Decision
	p := New(rules(t, "allowed.test:"+port), Options{Resolver: &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}, TestOnlyAllowLoopback: true,
		Audit: func(d Decision) { got = append(got, d) }})
	defer p.Close()
	a, b := net.Pipe()
	done := make(chan struct{})
	go func() { p.ServeConn(nilAddrConn{a}); close(done) }()
	b.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(b, "GET http://allowed.test:"+port+"/pipe HTTP/1.1\r\nHost: allowed.test:"+port+"\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(b), nil)
	if err != nil || resp.StatusCode != 200 || !strings.Contains(body(resp), "/pipe") {
		t.Fatalf("over a pipe: %v %v", resp, err)
	}
	b.Close()
	<-done
	if len(got) != 1 || !got[0].Allowed || got[0].Client != "" {
		t.Errorf("decisions %+v", got)
	}
}

type nilAddrConn struct{ net.Conn }

func (nilAddrConn) RemoteAddr() net.Addr { return nil }
