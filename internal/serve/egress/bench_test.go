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
	f := startProxy(b, rules(b, "allowed.test:"+port), Options{Resolver: res, TestOnlyAllowLoopback: true})
	// the direct client sends the same server name, dialling the server's address itself
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, n, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, n, "127.0.0.1:"+port)
		}}}
	run := func(b *testing.B, c *http.Client, u string) {
		for i := 0; i < b.N; i++ {
			run1(b, c, u)
		}
	}
	b.Run("direct", func(b *testing.B) { run(b, direct, "https://allowed.test:"+port+"/x") })
	b.Run("proxy", func(b *testing.B) { run(b, f.client(), "https://allowed.test:"+port+"/x") })
	// paired: each iteration fetches once directly and once through the proxy, so both see
	// the same machine load (the figures for the bench table: direct, proxy, added, in µs)
	b.Run("paired", func(b *testing.B) {
		via := f.client()
		var d, p time.Duration
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			run1(b, direct, "https://allowed.test:"+port+"/x")
			t1 := time.Now()
			run1(b, via, "https://allowed.test:"+port+"/x")
			d, p = d+t1.Sub(t0), p+time.Since(t1)
		}
		n := float64(b.N)
		b.ReportMetric(float64(d.Microseconds())/n, "direct-µs/fetch")
		b.ReportMetric(float64(p.Microseconds())/n, "proxy-µs/fetch")
		b.ReportMetric(float64((p-d).Microseconds())/n, "added-µs/fetch")
	})
}

func run1(b *testing.B, c *http.Client, u string) {
	resp, err := c.Get(u)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}
