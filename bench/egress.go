package main

import (
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
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// loopResolver maps every name to loopback: the bench's "remote" host runs on this machine.
type loopResolver struct{}

func (loopResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// egressRows measures what network by name adds to a small HTTPS fetch: the same fetch (a new
// connection each time, as a pip or curl run makes) straight to the server and through serve's
// egress proxy (CONNECT, list check, its own resolution, address check, SNI check, relay),
// interleaved so both see the same machine load.
func egressRows(n int, row func(string, []time.Duration)) error {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte("a small wheel index page\n"))
	}))
	defer srv.Close()
	port := strconv.Itoa(srv.Listener.Addr().(*net.TCPAddr).Port)
	rule, err := policy.ParseHostRule("pypi.test:" + port)
	if err != nil {
		return err
	}
	px := egress.New([]policy.HostRule{rule}, egress.Options{Resolver: loopResolver{}, TestOnlyAllowLoopback: true})
	defer px.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	go px.Serve(l)
	proxyURL, _ := url.Parse("http://" + l.Addr().String())
	tlsCfg := &tls.Config{InsecureSkipVerify: true} // the bench server's certificate is self-signed
	direct := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg, DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
		}}}
	via := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: tlsCfg, DisableKeepAlives: true,
		Proxy: http.ProxyURL(proxyURL)}}
	fetch := func(c *http.Client) (time.Duration, error) {
		t0 := time.Now()
		resp, err := c.Get("https://pypi.test:" + port + "/simple/")
		if err != nil {
			return 0, err
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err == nil && resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
		}
		return time.Since(t0), err
	}
	var d, p []time.Duration
	for i := 0; i < n; i++ {
		a, err := fetch(direct)
		if err != nil {
			return fmt.Errorf("direct fetch: %w", err)
		}
		b, err := fetch(via)
		if err != nil {
			return fmt.Errorf("fetch through the egress proxy: %w", err)
		}
		d, p = append(d, a), append(p, b)
	}
	row("baseline: small HTTPS fetch, new connection, direct; client: Go net/http", d)
	row("network by name: the same fetch through serve's egress proxy; client: Go net/http via the proxy", p)
	return nil
}
