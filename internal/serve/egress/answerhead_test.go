package egress

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A listed host's answer to a plain-http request has a bounded head: an upstream that sends
// header lines without end (or one endless line) gets the client a 502 naming the bound, and
// the proxy stops reading it at once. Without the bound http.ReadResponse held every byte:
// the proxy read all 64 MiB this upstream offered (and would have read on until serve died).
// Red without it (mutant egress-answer-head).
func TestUpstreamAnswerHeadBounded(t *testing.T) {
	for _, endless := range []string{"header lines", "one line"} {
		t.Run(strings.ReplaceAll(endless, " ", "-"), func(t *testing.T) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			const offer = 64 << 20
			var sent atomic.Int64
			go func() {
				c, err := l.Accept()
				if err != nil {
					return
				}
				defer c.Close()
				br := bufio.NewReader(c)
				for { // the request's head
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 200 OK\r\n")
				chunk := strings.Repeat("X-Pad: "+strings.Repeat("a", 1000)+"\r\n", 64)
				if endless == "one line" {
					chunk = "X-Pad: " + strings.Repeat("a", len(chunk)-7)
				}
				for sent.Load() < offer {
					n, err := io.WriteString(c, chunk)
					sent.Add(int64(n))
					if err != nil {
						return
					}
				}
			}()
			port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
			res := &mapResolver{m: map[string][]netip.Addr{"allowed.test": lo}}
			f := startProxy(t, rules(t, "allowed.test"), Options{Resolver: res, TestOnlyAllowLoopback: true, Dial: toPort(port), HeaderTimeout: time.Second})
			c, err := net.Dial("tcp", f.url.Host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			io.WriteString(c, "GET http://allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("no answer from the proxy: %v (the upstream sent %d bytes)", err, sent.Load())
			}
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			time.Sleep(100 * time.Millisecond) // what the upstream still got written into the socket buffers
			t.Logf("%s: %d %q; the upstream wrote %d bytes", endless, resp.StatusCode, b, sent.Load())
			if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(b), "head") {
				t.Errorf("an endless answer head: %d %q, want 502 naming the bound", resp.StatusCode, b)
			}
			if n := sent.Load(); n >= offer {
				t.Errorf("the proxy read all %d bytes of an endless answer head", n)
			}
		})
	}
}
