//go:build testhooks

package sandbox

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	egressproxy "github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The real proxy behind a host list, one per call: its bounds are the call's (refusals say
// "per call"), every decision reaches the audit log with the call's session, the host names a
// program sends are clipped there, and decisions past the log rate arrive as one summary when
// the call ends. The names resolve through the stand-in hook only: nothing reaches DNS.
func TestEgressProxyPerCall(t *testing.T) {
	t.Setenv(egressproxy.StandInsEnv, "known.example.test=203.0.113.9")
	ws := t.TempDir()
	p, err := defaultPolicy(ws)
	if err != nil {
		t.Fatal(err)
	}
	n, err := policy.NetworkHosts("*.example.test")
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(n)
	// the names below are asked one connection after another, but a finished connection's
	// handler may still be closing when the next one starts: under load more than
	// limits.egress_connections (32) were open, a 503 answered, and that name never counted
	p.Limits.EgressConnections = 1024
	g, err := newEgress(p, Options{})
	if err != nil || g == nil {
		t.Fatalf("newEgress: %v %v", g, err)
	}
	logPath := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(logPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	g.audit = l
	ask := func(serveConn func(net.Conn), host string) string {
		a, b := net.Pipe()
		go serveConn(a)
		b.SetDeadline(time.Now().Add(10 * time.Second))
		go io.WriteString(b, "CONNECT "+host+":443 HTTP/1.1\r\nHost: "+host+":443\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(b), nil)
		b.Close()
		if err != nil {
			t.Fatalf("%s: %v", host, err)
		}
		body, _ := io.ReadAll(resp.Body)
		return strings.TrimSpace(string(body))
	}
	serveConn, stop := g.forCall("sess-1", nil)
	long := strings.Repeat("x", 5000) + ".example.test"
	for i := 0; i < egressproxy.DefaultMaxWildcardNames; i++ {
		ask(serveConn, fmt.Sprintf("n%d.example.test", i))
	}
	if b := ask(serveConn, "n64.example.test"); !strings.Contains(b, "this call has already had 64 other names below wildcard rules resolved") {
		t.Errorf("name 65 in one call: %q", b)
	}
	if b := ask(serveConn, long); !strings.Contains(b, "a host name of 5013 bytes: DNS names are at most 253") {
		t.Errorf("a 5,000-byte name: %q", b)
	}
	stop()
	// a new call starts with a bound of its own
	serveConn2, stop2 := g.forCall("sess-2", nil)
	if b := ask(serveConn2, "n99.example.test"); !strings.Contains(b, "does not resolve") {
		t.Errorf("first name of the next call: %q", b)
	}
	stop2()
	var lines []audit.Entry
	for i := 0; i < 100; i++ { // stop closes the proxy in the background: wait for the summary
		lines = lines[:0]
		raw, _ := os.ReadFile(logPath)
		summary := false
		for _, ln := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
			var e audit.Entry
			if json.Unmarshal([]byte(ln), &e) == nil {
				lines = append(lines, e)
				summary = summary || e.Decision == egressproxy.AuditSummary
			}
		}
		if summary && len(lines) > 0 && lines[len(lines)-1].Session == "sess-2" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	var full, counted int
	for _, e := range lines {
		if len(e.Reason) > egressproxy.MaxLogReason+64 || strings.Contains(string(e.Arguments), strings.Repeat("x", 300)) {
			t.Errorf("an unclipped audit line: %d bytes of reason, %d of arguments", len(e.Reason), len(e.Arguments))
		}
		if e.Session != "sess-1" {
			continue
		}
		if e.Decision == egressproxy.AuditSummary {
			var a struct{ Suppressed int }
			json.Unmarshal(e.Arguments, &a)
			counted += a.Suppressed
		} else {
			full++
		}
	}
	if full+counted != egressproxy.DefaultMaxWildcardNames+2 || full > 2*egressproxy.DefaultLogRate {
		t.Errorf("call 1: %d decisions logged one by one and %d summarised, want %d in all, at most %d one by one",
			full, counted, egressproxy.DefaultMaxWildcardNames+2, 2*egressproxy.DefaultLogRate)
	}
}
