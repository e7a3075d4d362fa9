package egress

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// BenchmarkHTTPSFetch measures a small HTTPS GET on a fresh connection, directly and through
// the proxy (CONNECT, name resolution, address checks, ClientHello read, relay), in the same
// run: the difference is the proxy's added latency per fetch. A reused connection (keepalive)
// pays the proxy's set-up once and only a copy per byte after.
func BenchmarkHTTPSFetch(b *testing.B) {
	srv := newServer(b, true)
	port := strconv.Itoa(srv.port)
	res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
	f := startProxy(b, rules(b, "allowed.test:"+port), Options{Resolver: res, AllowLoopback: true})
	// the direct client sends the same server name, dialling the server's address itself
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, n, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, n, "127.0.0.1:"+port)
		}}}
	run := func(b *testing.B, c *http.Client, u string) {
		for i := 0; i < b.N; i++ {
			resp, err := c.Get(u)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, direct, "https://allowed.test:"+port+"/x") })
	b.Run("proxy", func(b *testing.B) { run(b, f.client(), "https://allowed.test:"+port+"/x") })
}
