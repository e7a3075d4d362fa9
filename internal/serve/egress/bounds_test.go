package egress

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
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
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// countingDial records dial attempts and never connects: the detector for "nothing dialled".
func countingDial(n *atomic.Int64) func(ctx context.Context, _, a string) (net.Conn, error) {
	return func(ctx context.Context, _, a string) (net.Conn, error) {
		n.Add(1)
		return nil, fmt.Errorf("test: dial to %s refused by the test", a)
	}
}

// A listed name resolving to one of this host's own addresses (a public one here, which no
// range covers) is refused without a dial; with the address not among the host's, it is dialled.
func TestOwnAddrsDenied(t *testing.T) {
	own := netip.MustParseAddr("203.0.113.7")
	var dials atomic.Int64
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": {own}}}
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, Dial: countingDial(&dials),
		LocalAddrs: func() []netip.Addr { return []netip.Addr{netip.MustParseAddr("10.9.9.9"), own} }})
	resp, _, _ := rawConnect(t, f.url, "allowed.test:443")
	if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "203.0.113.7, this host's own address") {
		t.Errorf("own address: %d %q", resp.StatusCode, b)
	}
	if ds := f.decisions(); len(ds) != 1 || ds[0].Rule != RuleDeniedAddr {
		t.Errorf("audit: %+v", ds)
	}
	// the default dialer's Control refuses it too
	d := New(nil, Options{LocalAddrs: func() []netip.Addr { return []netip.Addr{own} }})
	if _, err := d.o.Dial(context.Background(), "tcp", "[::ffff:203.0.113.7]:443"); err == nil || !strings.Contains(err.Error(), "own address") {
		t.Errorf("dial of an own address: %v", err)
	}
	if dials.Load() != 0 {
		t.Errorf("%d dials to an own address, want 0", dials.Load())
	}
	// an IPv6 form carrying an own IPv4 address (NAT64, 6to4: found by an outside attack) is
	// refused the same way, with no dial
	for _, form := range []string{"64:ff9b::cb00:7107", "2002:cb00:7107::1", "::ffff:0:cb00:7107"} {
		res.m["carried.test"] = []netip.Addr{netip.MustParseAddr(form)}
		c := startProxy(t, rules(t, "carried.test"), Options{Resolver: res, Dial: countingDial(&dials),
			LocalAddrs: func() []netip.Addr { return []netip.Addr{own} }})
		resp, _, _ := rawConnect(t, c.url, "carried.test:443")
		if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "of 203.0.113.7, this host's own address") {
			t.Errorf("%s carrying an own address: %d %q", form, resp.StatusCode, b)
		}
	}
	if dials.Load() != 0 {
		t.Errorf("%d dials to an IPv6 form of an own address, want 0", dials.Load())
	}
	// control: the same address, not the host's, is dialled
	g := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, Dial: countingDial(&dials), LocalAddrs: func() []netip.Addr { return nil }})
	resp, _, _ = rawConnect(t, g.url, "allowed.test:443")
	if resp.StatusCode != 502 || dials.Load() != 1 {
		t.Errorf("control: %d, %d dials, want 502 after 1", resp.StatusCode, dials.Load())
	}
	// TestOnlyAllowAddrs re-opens an exact own ip:port (the harness's stand-ins)
	h := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, Dial: countingDial(&dials),
		LocalAddrs: func() []netip.Addr { return []netip.Addr{own} }, TestOnlyAllowAddrs: []netip.AddrPort{netip.AddrPortFrom(own, 443)}})
	resp, _, _ = rawConnect(t, h.url, "allowed.test:443")
	if resp.StatusCode != 502 || dials.Load() != 2 {
		t.Errorf("TestOnlyAllowAddrs: %d, %d dials, want 502 after 2", resp.StatusCode, dials.Load())
	}
}

// The default gatherer lists this host's interface addresses, a non-loopback one included
// when the host has one (docker0's 172.17.0.1 on a docker host), and the proxy denies each.
func TestDefaultLocalAddrs(t *testing.T) {
	got := LocalAddrs()
	var want []netip.Addr
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	for _, i := range ifs {
		as, _ := i.Addrs()
		for _, a := range as {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() {
				ip, _ := netip.AddrFromSlice(n.IP)
				want = append(want, ip.Unmap())
			}
		}
	}
	if len(want) == 0 {
		t.Skip("this host has no non-loopback interface address")
	}
	p := New(nil, Options{})
	for _, w := range want {
		found := false
		for _, g := range got {
			found = found || g == w
		}
		if !found {
			t.Errorf("LocalAddrs() = %v lacks the interface address %s", got, w)
		}
		if p.denied(w, 443) == "" {
			t.Errorf("the proxy would connect to this host's own %s", w)
		}
		if !p.isOwn(w) {
			t.Errorf("isOwn(%s) = false", w)
		}
	}
	t.Logf("own non-loopback addresses: %v", want)
}

// A listed name resolving to an IPv6 address that carries a denied IPv4 address (NAT64, 6to4,
// IPv4-translated, ISATAP) or an unverifiable one (Teredo) is refused without a dial.
func TestEmbeddedV4Denied(t *testing.T) {
	var dials atomic.Int64
	for _, a := range []string{"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2002:a9fe:a9fe::1", "::ffff:0:a00:1",
		"64:ff9b:1::cb00:7107", "2001:0:4136:e378:8000:63bf:3fff:fdd2", "::7f00:1", "2a01:db8::5efe:7f00:1"} {
		res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr(a)}}}
		f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, Dial: countingDial(&dials), LocalAddrs: func() []netip.Addr { return nil }})
		resp, _, _ := rawConnect(t, f.url, "allowed.test:443")
		if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "never reachable") {
			t.Errorf("%s: %d %q", a, resp.StatusCode, b)
		}
	}
	if dials.Load() != 0 {
		t.Errorf("%d dials to IPv6 addresses carrying denied IPv4 ones, want 0", dials.Load())
	}
	// control: 6to4 of a public address is dialled
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": {netip.MustParseAddr("2002:cb00:7107::1")}}}
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, Dial: countingDial(&dials), LocalAddrs: func() []netip.Addr { return nil }})
	if resp, _, _ := rawConnect(t, f.url, "allowed.test:443"); resp.StatusCode != 502 || dials.Load() != 1 {
		t.Errorf("control: %d, %d dials", resp.StatusCode, dials.Load())
	}
}

// "*.example.com" allows names below example.com only: never one that merely contains it.
// Those are refused before any lookup; a name below it is reached.
func TestWildcardBelowDomainOnly(t *testing.T) {
	srv := newServer(t, true)
	res := &mapResolver{m: map[string][]netip.Addr{"a.example.com.evil.test": lo, "evil-example.com": lo, "a.example.com": lo}}
	f := startProxy(t, rules(t, "*.example.com"), Options{Resolver: res, TestOnlyAllowLoopback: true, Dial: toPort(strconv.Itoa(srv.port)), HeaderTimeout: 300 * time.Millisecond})
	for _, h := range []string{"a.example.com.evil.test", "evil-example.com"} {
		resp, _, _ := rawConnect(t, f.url, h+":443")
		if b := body(resp); resp.StatusCode != 403 || !strings.Contains(b, "not in docker.network") {
			t.Errorf("%s against *.example.com: %d %q, want 403 not listed", h, resp.StatusCode, b)
		}
	}
	if res.lookups != 0 || srv.hits.Load() != 0 {
		t.Errorf("names outside the wildcard: %d lookups, %d hits, want 0 and 0", res.lookups, srv.hits.Load())
	}
	// control: a name below the domain goes through
	if code, _, err := get(t, f.client(), "https://a.example.com/"); err != nil || code != 200 || srv.hits.Load() != 1 {
		t.Errorf("a.example.com: %d %v hits %d", code, err, srv.hits.Load())
	}
}

// A wildcard rule resolves at most MaxWildcardNames distinct names per proxy: past it a new
// name is refused (rule limit) before any lookup; a name seen before and a name listed exactly
// still work.
func TestWildcardNameBound(t *testing.T) {
	res := &mapResolver{m: map[string][]netip.Addr{}}
	var dials atomic.Int64
	f := startProxy(t, rules(t, "*.example.com", "exact.example.com"), Options{Resolver: res, Dial: countingDial(&dials), MaxWildcardNames: 3, Scope: "call",
		LocalAddrs: func() []netip.Addr { return nil }})
	status := func(h string) (int, string) {
		resp, _, _ := rawConnect(t, f.url, h+":443")
		return resp.StatusCode, body(resp)
	}
	for i := 1; i <= 3; i++ {
		if code, b := status(fmt.Sprintf("n%d.example.com", i)); code != 502 {
			t.Errorf("name %d: %d %q, want 502 (listed, does not resolve)", i, code, b)
		}
	}
	code, b := status("n4.example.com")
	if code != 403 || !strings.Contains(b, "this call has already had 3 other names below wildcard rules resolved (the wildcard name bound") || !strings.Contains(b, `add "n4.example.com"`) {
		t.Errorf("name 4: %d %q", code, b)
	}
	// a name longer than DNS allows is refused before any rule or lookup
	if code, b := status(strings.Repeat("a.", 130) + "example.com"); code != 400 || !strings.Contains(b, "DNS names are at most 253") {
		t.Errorf("a 271-byte name: %d %q", code, b)
	}
	if res.lookups != 3 {
		t.Errorf("%d lookups, want 3 (the refused names must not reach DNS)", res.lookups)
	}
	if code, _ := status("n1.example.com"); code != 502 {
		t.Errorf("a name seen before: %d, want 502", code)
	}
	if code, _ := status("exact.example.com"); code != 502 {
		t.Errorf("a name listed exactly: %d, want 502", code)
	}
	var limit int
	for _, d := range f.decisions() {
		if d.Rule == RuleLimit && d.Host == "n4.example.com" {
			limit++
		}
	}
	if limit != 1 {
		t.Errorf("%d limit decisions for n4, want 1", limit)
	}
	// control: with no bound the fourth name is looked up
	g := startProxy(t, rules(t, "*.example.com"), Options{Resolver: res, Dial: countingDial(&dials), MaxWildcardNames: -1})
	if resp, _, _ := rawConnect(t, g.url, "n4.example.com:443"); resp.StatusCode != 502 {
		t.Errorf("control: %d", resp.StatusCode)
	}
}

// hello builds a minimal TLS ClientHello naming sni, split into records of at most frag bytes
// of handshake data (0 = one record). crypto/tls's client never sends a trailing dot; OpenSSL
// and Python do.
func hello(sni string, frag int) []byte {
	var ext []byte
	if sni != "" {
		ent := append([]byte{0, byte(len(sni) >> 8), byte(len(sni))}, sni...)
		list := append(binary.BigEndian.AppendUint16(nil, uint16(len(ent))), ent...)
		ext = append(binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(nil, 0), uint16(len(list))), list...)
	}
	body := []byte{3, 3}
	body = append(body, make([]byte, 32)...)
	body = append(body, 0, 0, 2, 0x13, 0x01, 1, 0)
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)
	msg := append([]byte{1, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	if frag == 0 {
		frag = len(msg)
	}
	var out []byte
	for len(msg) > 0 {
		n := min(frag, len(msg))
		out = append(out, 22, 3, 1, byte(n>>8), byte(n))
		out = append(out, msg[:n]...)
		msg = msg[n:]
	}
	return out
}

func TestReadClientHello(t *testing.T) {
	for _, c := range []struct {
		in   []byte
		want string
		ok   bool
	}{
		{hello("allowed.test", 0), "allowed.test", true},
		{hello("Allowed.Test.", 0), "allowed.test", true},
		{hello("allowed.test.", 7), "allowed.test", true},
		{hello("", 0), "", true},
		{[]byte("GET / HTTP/1.1\r\n\r\n"), "", false},
		{hello("a.test", 0)[:20], "", false},
	} {
		sni, consumed, err := readClientHello(bytes.NewReader(c.in))
		if (err == nil) != c.ok || sni != c.want {
			t.Errorf("%q: %q %v, want %q ok=%v", c.in, sni, err, c.want, c.ok)
		}
		if c.ok && !bytes.Equal(consumed, c.in) {
			t.Errorf("consumed %d bytes, want all %d", len(consumed), len(c.in))
		}
	}
	// two host names, or the extension twice: no ClientHello (the name checked must be the one used)
	// a server_name extension holding two host_name entries
	ent := func(n string) []byte { return append([]byte{0, 0, byte(len(n))}, n...) }
	list := append(ent("a.test"), ent("b.test")...)
	ext := append([]byte{0, 0, 0, byte(len(list) + 2), 0, byte(len(list))}, list...)
	b := append([]byte{3, 3}, make([]byte, 32)...)
	b = append(b, 0, 0, 2, 0x13, 0x01, 1, 0, 0, byte(len(ext)))
	b = append(b, ext...)
	msg := append([]byte{1, 0, 0, byte(len(b))}, b...)
	dup := append([]byte{22, 3, 1, 0, byte(len(msg))}, msg...)
	if sni, _, err := readClientHello(bytes.NewReader(dup)); err == nil {
		t.Errorf("two host names parsed as %q", sni)
	}
	// what crypto/tls sends parses too
	a, z := net.Pipe()
	go tls.Client(a, &tls.Config{ServerName: "go.example", InsecureSkipVerify: true}).Handshake()
	z.SetDeadline(time.Now().Add(5 * time.Second))
	if sni, _, err := readClientHello(z); err != nil || sni != "go.example" {
		t.Errorf("crypto/tls hello: %q %v", sni, err)
	}
	a.Close()
	z.Close()
}

// rawUpstream is a TCP server that says banner first, then counts and echoes what it gets.
func rawUpstream(t *testing.T, banner string) (port string, got *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	got = new(atomic.Int64)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.WriteString(c, banner)
				b := make([]byte, 4096)
				for {
					n, err := c.Read(b)
					got.Add(int64(n))
					c.Write(b[:n])
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port), got
}

// A rule naming a port other than 443 carries any protocol, the server speaking first
// included (ssh); a ClientHello sent on it is still checked, with a trailing dot accepted.
func TestPortedRuleCarriesAnyProtocol(t *testing.T) {
	port, got := rawUpstream(t, "SSH-2.0-stand-in\r\n")
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: res, TestOnlyAllowLoopback: true, HeaderTimeout: time.Second})
	resp, c, br := rawConnect(t, f.url, "allowed.test:"+port)
	if resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %d", resp.StatusCode)
	}
	line, err := br.ReadString('\n')
	if err != nil || line != "SSH-2.0-stand-in\r\n" {
		t.Fatalf("server-first banner through the tunnel: %q %v", line, err)
	}
	io.WriteString(c, "SSH-2.0-client\r\n")
	if echo, err := br.ReadString('\n'); err != nil || echo != "SSH-2.0-client\r\n" {
		t.Errorf("echo: %q %v", echo, err)
	}
	c.Close()

	// TLS on that port: another name is cut before it reaches upstream, with an alert
	before := got.Load()
	_, c, br = rawConnect(t, f.url, "allowed.test:"+port)
	br.ReadString('\n') // the banner
	c.Write(hello("evil.test", 0))
	rest, _ := io.ReadAll(br)
	if !bytes.Equal(rest, tlsAlertAccessDenied) {
		t.Errorf("after a fronted ClientHello the client got %q, want the access_denied alert", rest)
	}
	if got.Load() != before {
		t.Errorf("upstream received %d bytes of a refused ClientHello", got.Load()-before)
	}
	// plain HTTP in such a tunnel is refused, even split into small writes: it has its own way
	// through the proxy, which checks every request's Host (a second request in a tunnel could
	// name any site served at the listed address)
	_, c, br = rawConnect(t, f.url, "allowed.test:"+port)
	br.ReadString('\n')
	io.WriteString(c, "G")
	time.Sleep(50 * time.Millisecond)
	io.WriteString(c, "ET / HTTP/1.1\r\nHost: forbidden.test\r\n\r\n")
	if r, err := http.ReadResponse(br, nil); err != nil || r.StatusCode != 403 || !strings.Contains(body(r), "carries plain HTTP (GET ...): send http:// URLs through the proxy") {
		t.Errorf("plain HTTP in a tunnel to a listed port: %v %v", r, err)
	}
	if got.Load() != before {
		t.Errorf("upstream received %d bytes of plain HTTP in a tunnel", got.Load()-before)
	}
	// the trailing-dot form of the CONNECT host passes
	_, c, br = rawConnect(t, f.url, "allowed.test:"+port)
	br.ReadString('\n')
	h := hello("allowed.test.", 0)
	c.Write(h)
	echo := make([]byte, len(h))
	if _, err := io.ReadFull(br, echo); err != nil || !bytes.Equal(echo, h) {
		t.Errorf("trailing-dot ClientHello not relayed: %v", err)
	}
	c.Close()
	var sni int
	for _, d := range f.decisions() {
		if (d.Rule == RuleSNI || d.Rule == RuleNotTLS) && strings.Contains(d.Reason, "refused after the tunnel opened") {
			sni++
		}
	}
	if sni != 2 {
		t.Errorf("%d post-200 refusals audited, want 2 (SNI, plain HTTP)", sni)
	}
}

// Plain HTTP inside a tunnel to a listed port is refused in every form an HTTP server parses
// as a request, not only "GET / HTTP/1.1" (atk39 F1: a leading CRLF, which servers skip, or a
// method holding '-' passed, and the Host header reached another site at the listed address);
// the line of a protocol of its own still passes, and its bytes reach the server.
func TestTunnelPlainHTTPAnySpelling(t *testing.T) {
	port, got := rawUpstream(t, "")
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	f := startProxy(t, rules(t, "allowed.test:"+port), Options{Resolver: res, TestOnlyAllowLoopback: true, HeaderTimeout: time.Second})
	const host = "Host: other.test\r\n\r\n"
	refused := []struct{ name, send string }{
		{"plain", "GET / HTTP/1.1\r\n" + host},
		{"leading CRLF", "\r\nGET / HTTP/1.1\r\n" + host},
		{"leading LF", "\nGET / HTTP/1.1\r\n" + host},
		{"leading blank lines and spaces", "\r\n\r\n \t GET / HTTP/1.1\r\n" + host},
		{"M-SEARCH", "M-SEARCH * HTTP/1.1\r\n" + host},
		{"VERSION-CONTROL", "VERSION-CONTROL / HTTP/1.1\r\n" + host},
		{"lower case", "get / HTTP/1.1\r\n" + host},
		{"token characters", "X_Y.Z~1!#$%&'*+^`|- / HTTP/1.1\r\n" + host},
		{"tabs", "GET\t/\tHTTP/1.1\r\n" + host},
		{"two spaces", "GET  /  HTTP/1.1\r\n" + host},
		{"HTTP/1.0", "GET / HTTP/1.0\r\n" + host},
		{"lower-case version", "GET x http/1.1\r\n" + host},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
		{"no version (Node reads the headers after it)", "GET /\r\n" + host},
		{"no version, LF", "POST /\n" + host},
		{"absolute form, no version", "GET http://other.test/\r\n" + host},
		{"asterisk, no version", "OPTIONS *\r\n" + host},
		{"CONNECT", "connect other.test:80\r\n" + host},
		{"target past the bound", "GET " + strings.Repeat("a", maxRequestLine) + " HTTP/1.1\r\n" + host},
		{"split into bytes", "\r\nM-SEARCH / HTTP/1.1\r\n" + host},
	}
	before := got.Load()
	for _, tc := range refused {
		_, c, br := rawConnect(t, f.url, "allowed.test:"+port)
		if tc.name == "split into bytes" {
			for i := 0; i < 12; i++ {
				c.Write([]byte{tc.send[i]})
				time.Sleep(5 * time.Millisecond)
			}
			io.WriteString(c, tc.send[12:])
		} else {
			io.WriteString(c, tc.send)
		}
		r, err := http.ReadResponse(br, nil)
		if err != nil || r.StatusCode != 403 || !strings.Contains(body(r), "carries plain HTTP (") {
			t.Errorf("%s: %q through a tunnel to a listed port: %v %v, want 403", tc.name, clip(tc.send, 40), r, err)
		}
		c.Close()
	}
	if got.Load() != before {
		t.Errorf("upstream received %d bytes of plain HTTP in tunnels", got.Load()-before)
	}
	// a protocol of its own: relayed (the upstream echoes it)
	passed := []string{
		"SSH-2.0-client\r\n",
		"EHLO mail.test\r\n",
		"a001 LOGIN user pass\r\n",
		"*1\r\n$4\r\nPING\r\n",
		"USER anonymous\r\n",
		"\x00\x00\x00\x08\x04\xd2\x16\x2f",
		"GET key\r\n",
	}
	for _, s := range passed {
		_, c, br := rawConnect(t, f.url, "allowed.test:"+port)
		io.WriteString(c, s)
		echo := make([]byte, len(s))
		if _, err := io.ReadFull(br, echo); err != nil || string(echo) != s {
			t.Errorf("%q not relayed: got %q %v", s, echo, err)
		}
		c.Close()
	}
}

// On a port that carries TLS only, a trailing-dot ClientHello for the CONNECT host is
// relayed (OpenSSL and Python send one); a refusal after the 200 reaches the client in its
// own protocol and is audited and logged as a warning.
func TestTLSOnlyPortRefusalsVisible(t *testing.T) {
	port, got := rawUpstream(t, "")
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	var logs testenv.LockedBuffer
	f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, TestOnlyAllowLoopback: true, HeaderTimeout: time.Second, Dial: toPort(port),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	// trailing dot, fragmented: relayed
	_, c, br := rawConnect(t, f.url, "allowed.test:443")
	h := hello("allowed.test.", 10)
	c.Write(h)
	echo := make([]byte, len(h))
	if _, err := io.ReadFull(br, echo); err != nil || !bytes.Equal(echo, h) {
		t.Errorf("trailing-dot ClientHello on 443 not relayed: %v", err)
	}
	c.Close()
	n := got.Load()
	// plain HTTP inside the tunnel: an HTTP 403 naming the fix
	_, c, br = rawConnect(t, f.url, "allowed.test:443")
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 403 || !strings.Contains(body(resp), "port 443 carries TLS only") {
		t.Errorf("plain HTTP in a TLS tunnel: %v %v", resp, err)
	}
	// a fronted ClientHello: the TLS alert
	_, c, br = rawConnect(t, f.url, "allowed.test:443")
	c.Write(hello("evil.test", 0))
	if rest, _ := io.ReadAll(br); !bytes.Equal(rest, tlsAlertAccessDenied) {
		t.Errorf("fronted ClientHello: client got %q, want the alert", rest)
	}
	// what a real client makes of it: crypto/tls reports access denied, not EOF
	_, c, _ = rawConnect(t, f.url, "allowed.test:443")
	err = tls.Client(c, &tls.Config{ServerName: "other.test", InsecureSkipVerify: true}).Handshake()
	if err == nil || !strings.Contains(err.Error(), "access denied") {
		t.Errorf("crypto/tls client after a refusal: %v, want access denied", err)
	}
	if got.Load() != n {
		t.Errorf("upstream received %d bytes through refused tunnels", got.Load()-n)
	}
	var post int
	for _, d := range f.decisions() {
		if !d.Allowed && strings.Contains(d.Reason, "refused after the tunnel opened") {
			post++
		}
	}
	if post != 3 {
		t.Errorf("%d post-200 refusals audited, want 3", post)
	}
	if w := strings.Count(logs.String(), "level=WARN msg=\"egress denied\""); w != 3 {
		t.Errorf("%d warnings logged, want 3:\n%s", w, logs.String())
	}
}

// One looping program: 10,000 denied requests with 5,000-byte host names. The audit gets
// each field clipped, at most LogRate decisions a second one by one, and summaries that
// count every other one: nothing is invisible, and the volume is bounded.
func TestDecisionLogBounded(t *testing.T) {
	const total, hostLen, rate = 10000, 5000, 20 // names too long for DNS: refused 400 before any rule
	var mu sync.Mutex
	var full, summaries, counted, bytesOut int
	var maxEntry int
	var logs testenv.LockedBuffer
	p := New(rules(t, "allowed.test"), Options{Resolver: &mapResolver{}, LogRate: rate, Key: "docker.network",
		Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Audit: func(d Decision) {
			b, _ := json.Marshal(d.Entry("srv", "sess", "hash"))
			mu.Lock()
			defer mu.Unlock()
			bytesOut += len(b)
			maxEntry = max(maxEntry, len(b))
			if d.Rule == RuleLogRate {
				summaries++
				counted += d.Suppressed
				if d.SuppressedDenied != d.Suppressed {
					t.Errorf("summary: %d denied of %d", d.SuppressedDenied, d.Suppressed)
				}
				return
			}
			full++
			if len(d.Host) > MaxLogHost || len(d.Reason) > MaxLogReason {
				t.Errorf("decision not clipped: host %d bytes, reason %d", len(d.Host), len(d.Reason))
			}
		}})
	start := time.Now()
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1); i <= total; i = next.Add(1) {
				a, b := net.Pipe()
				go p.ServeConn(a)
				host := fmt.Sprintf("%d-%s.test", i, strings.Repeat("x", hostLen))
				go fmt.Fprintf(b, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host)
				resp, err := http.ReadResponse(bufio.NewReader(b), nil)
				// 503: more than MaxConns at once (handlers still emitting), a refusal too
				if err != nil || resp.StatusCode != 400 && resp.StatusCode != 403 && resp.StatusCode != 503 {
					t.Errorf("request %d: %v %v", i, resp, err)
					b.Close()
					return
				}
				io.Copy(io.Discard, resp.Body)
				b.Close()
			}
		}()
	}
	wg.Wait()
	p.Close()
	secs := time.Since(start).Seconds()
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d decisions in %.1fs: %d logged one by one, %d summaries counting %d; %d audit bytes (largest entry %d), %d bytes of log",
		total, secs, full, summaries, counted, bytesOut, maxEntry, len(logs.String()))
	if full+counted != total {
		t.Errorf("logged %d + summarised %d = %d, want every one of %d", full, counted, full+counted, total)
	}
	windows := int(secs) + 2
	if full > rate*windows || summaries > windows+1 {
		t.Errorf("%d decisions logged one by one and %d summaries in %.1fs, want at most %d and %d", full, summaries, secs, rate*windows, windows+1)
	}
	if maxEntry > 3000 {
		t.Errorf("largest audit entry %d bytes, want at most 3000", maxEntry)
	}
	if lines := strings.Count(logs.String(), "\n"); lines != full+summaries {
		t.Errorf("%d log lines, want %d (the logger is bounded like the audit)", lines, full+summaries)
	}
}

func TestClip(t *testing.T) {
	long := strings.Repeat("é", 400)
	c := clip(long, 100)
	if len(c) > 100 || !strings.Contains(c, "[800 bytes, sha256:") || !strings.HasPrefix(c, "é") {
		t.Errorf("clip: %q (%d bytes)", c, len(c))
	}
	if clip("short", 100) != "short" {
		t.Error("a short value changed")
	}
	d := Decision{Host: strings.Repeat("h", 5000), Reason: "not in x (add \"" + strings.Repeat("h", 5000) + "\")"}
	clipDecision(&d)
	if len(d.Host) > MaxLogHost || len(d.Reason) > MaxLogReason || !strings.Contains(d.Reason, "sha256:") {
		t.Errorf("clipDecision: host %d, reason %q", len(d.Host), d.Reason)
	}
}

// A host, method or client address a sandbox chose reaches the audit line as visible text:
// a bidirectional override (U+202E) in a CONNECT host would make jq -r print the name
// reordered (atk39 F8), as a workspace path's would (atk38b F6). A host no rule can name
// (not letters, digits, '-', '_', '.', nor an IP address) is refused 400 before any decision
// about it, so it is no decision's host.
func TestAuditShowsHostileNames(t *testing.T) {
	const host = "\u202etset.tsohv\u202c.moc.live-ro-tset.tsohv"
	var mu sync.Mutex
	var lines [][]byte
	p := New(rules(t, "allowed.test"), Options{Resolver: &mapResolver{}, Key: "docker.network",
		Audit: func(d Decision) {
			b, _ := json.Marshal(d.Entry("srv", "sess", "hash"))
			mu.Lock()
			defer mu.Unlock()
			lines = append(lines, b)
		}})
	c1, c2 := net.Pipe()
	go p.ServeConn(c2)
	c1.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c1, "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n", host, host)
	r, err := http.ReadResponse(bufio.NewReader(c1), &http.Request{Method: http.MethodConnect})
	if err != nil || r.StatusCode != 400 {
		t.Fatalf("CONNECT to a hostile name: %v %v, want 400", r, err)
	}
	c1.Close()
	p.Close()
	// a Decision built outside the proxy: every field a sandbox chose
	lines = append(lines, must(json.Marshal(Decision{Method: "GET\u202e", Host: host, Client: "mcpsandbox-1\u202e", Addr: "\u2066x",
		Rule: "docker.network", Reason: "egress to " + host + ":443 denied\u2069"}.Entry("srv", "sess", "hash"))))
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 2 {
		t.Fatalf("%d audit lines, want 2", len(lines))
	}
	for _, b := range lines {
		var e struct {
			Reason, Rule string
			Arguments    struct{ Host, Method, Client, Addr string }
		}
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatal(err)
		}
		for _, s := range []string{e.Reason, e.Arguments.Host, e.Arguments.Method, e.Arguments.Client, e.Arguments.Addr} {
			if strings.ContainsAny(s, "\u202e\u202c\u2066\u2069") {
				t.Errorf("audit line shows a bidi control raw: %q in %s", s, b)
			}
		}
		if e.Rule == RuleBadRequest { // the proxy's: refused before it had a host
			if e.Arguments.Host != "" || !strings.Contains(e.Reason, "not a host name") {
				t.Errorf("hostile CONNECT host: host %q, reason %q; want none, refused as not a host name", e.Arguments.Host, e.Reason)
			}
		} else if e.Arguments.Host != strconv.Quote(host) {
			t.Errorf("host shown as %q, want %q", e.Arguments.Host, strconv.Quote(host))
		}
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// A decision that knows its call names it in the audit line's arguments (arguments.call), not
// in the line's own call field, which pairs a call's started line with its outcome: with two
// calls of a session at once, the log says which call reached which host (atk39 F5).
func TestAuditNamesTheCall(t *testing.T) {
	var e struct {
		Call      string
		Arguments struct{ Call string }
	}
	b := must(json.Marshal(Decision{Method: "CONNECT", Host: "allowed.test", Port: 443, Allowed: true, Rule: "allowed.test",
		Client: "mcpsandbox-1", Call: "2e892a68"}.Entry("srv", "sess", "hash")))
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if e.Arguments.Call != "2e892a68" || e.Call != "" {
		t.Errorf("egress line: arguments.call %q, call %q; want the call in arguments only: %s", e.Arguments.Call, e.Call, b)
	}
	b = must(json.Marshal(Decision{Method: "CONNECT", Host: "allowed.test", Port: 443, Rule: "docker.network"}.Entry("srv", "sess", "hash")))
	if strings.Contains(string(b), `"call"`) {
		t.Errorf("a decision of no known call names one: %s", b)
	}
}

// A window's timer that fires late, after a decision of the next window took the summary and
// armed the next timer, takes nothing: it took the new window's count early (two summaries a
// window under load, TestDecisionLogBounded at load 20+). Red without the check (mutant
// egress-log-stale-timer): the stale timer's flush emits a second summary.
func TestDecisionLogStaleTimer(t *testing.T) {
	var mu sync.Mutex
	var summaries []Decision
	p := New(rules(t, "allowed.test"), Options{Resolver: &mapResolver{}, LogRate: 1, Key: "docker.network",
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Audit: func(d Decision) {
			if d.Rule == RuleLogRate {
				mu.Lock()
				summaries = append(summaries, d)
				mu.Unlock()
			}
		}})
	defer p.Close()
	deny := func(host string) { p.Record(Decision{Host: host, Port: 443, Rule: "docker.network", Reason: "test"}) }
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(summaries) }
	deny("a1.test") // logged
	deny("a2.test") // counted: the window's timer is armed
	p.mu.Lock()
	stale := p.lim.timer
	p.mu.Unlock()
	for end := time.Now().Add(5 * time.Second); count() < 1 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
	}
	if count() != 1 {
		t.Fatalf("%d summaries after the first window, want 1", count())
	}
	deny("b1.test") // the next window: logged
	deny("b2.test") // counted: its own timer armed
	p.flushTimer(&stale)
	if n := count(); n != 1 {
		t.Fatalf("the first window's timer, fired late, emitted a summary mid-window (%d summaries, want 1): %+v", n, summaries[n-1])
	}
	for end := time.Now().Add(5 * time.Second); count() < 2 && time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
	}
	if n := count(); n != 2 || summaries[1].Suppressed != 1 || summaries[1].Host != "b2.test" {
		t.Fatalf("the second window's summary: %d summaries %+v, want 2, the second counting b2.test", n, summaries)
	}
}
