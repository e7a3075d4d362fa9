package sandbox

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	egressproxy "github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// benchResolver maps every name to loopback, where the benchmark's server listens.
type benchResolver struct{}

func (benchResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
}

// fetchLoopArg makes this test binary, run as an allowlisted command, a Go HTTPS client that
// fetches argv[2] argv[3] times (a fresh connection each time, through $HTTPS_PROXY when set)
// and prints the total in nanoseconds: a client far lighter than Python, so the proxy's share
// of a fetch shows.
const fetchLoopArg = "__egress-fetch-loop"

func init() {
	if len(os.Args) == 4 && os.Args[1] == fetchLoopArg {
		n, _ := strconv.Atoi(os.Args[3])
		ns, err := fetchLoop(os.Args[2], n)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Println(ns)
		os.Exit(0)
	}
}

func fetchLoop(url string, n int) (int64, error) {
	c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment,
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, DisableKeepAlives: true}}
	start := time.Now()
	for i := 0; i < n; i++ {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return time.Since(start).Nanoseconds(), nil
}

// fetchLoopPy fetches URL N times over HTTPS, a fresh connection each time (urllib), and prints
// the fetches' total wall time in nanoseconds: the interpreter's start-up is not in it.
const fetchLoopPy = `
import sys, ssl, time, urllib.request
url, n = sys.argv[1], int(sys.argv[2])
ctx = ssl.create_default_context()
ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))
t = time.perf_counter_ns()
for _ in range(n):
    with opener.open(url, timeout=10) as r:
        r.read()
print(time.perf_counter_ns() - t)
`

// BenchmarkEgressFetch is a small HTTPS fetch (fresh connection, CONNECT, TLS, GET) by Python
// inside the sandbox, through the call's listener in its network namespace and serve's egress
// proxy, beside the same Python fetching the same server directly on the host, in one run. The
// ns/fetch metric is the number to compare (ns/op also carries the interpreter's start-up and,
// for the sandbox, the call's): b.N fetches are made by one process.
func BenchmarkEgressFetch(b *testing.B) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("small file\n"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	rules, err := policy.NetworkHosts("bench.test:" + port)
	if err != nil {
		b.Fatal(err)
	}
	px := egressproxy.New(rules.Hosts(), egressproxy.Options{Key: "allowlist.network", Resolver: benchResolver{}, TestOnlyAllowLoopback: true})
	defer px.Close()
	// The direct clients run as processes of their own at the sandbox's priority (nice), so
	// that on a busy host the difference is the path, not the scheduler.
	b.Run("go/direct on the host", func(b *testing.B) {
		exe, _ := os.Executable()
		out, err := exec.Command("nice", "-n", strconv.Itoa(nice), exe, fetchLoopArg, "https://127.0.0.1:"+port+"/f", strconv.Itoa(b.N)).CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		b.ReportMetric(fetchNS(b, string(out))/float64(b.N), "ns/fetch")
	})
	b.Run("go/sandbox through the proxy", func(b *testing.B) {
		exe, _ := os.Executable()
		e := egressExecutor(b, px.ServeConn, exe)
		args, _ := json.Marshal(map[string]any{"command": "self", "args": []string{fetchLoopArg, "https://bench.test:" + port + "/f", strconv.Itoa(b.N)}})
		res, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 5 * time.Minute, MaxOutput: 64 << 10})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		b.ReportMetric(fetchNS(b, res.Stdout)/float64(b.N), "ns/fetch")
	})
	b.Run("python/direct on the host", func(b *testing.B) {
		out, err := exec.Command("nice", "-n", strconv.Itoa(nice), "/usr/bin/python3", "-c", fetchLoopPy, "https://127.0.0.1:"+port+"/f", strconv.Itoa(b.N)).CombinedOutput()
		if err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		b.ReportMetric(fetchNS(b, string(out))/float64(b.N), "ns/fetch")
	})
	b.Run("python/sandbox through the proxy", func(b *testing.B) {
		e := egressExecutor(b, px.ServeConn)
		args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", fetchLoopPy, "https://bench.test:" + port + "/f", strconv.Itoa(b.N)}})
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		res, err := e.run(ctx, executor.Call{Args: args, Timeout: 5 * time.Minute, MaxOutput: 64 << 10})
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("%v %+v", err, res)
		}
		b.ReportMetric(fetchNS(b, res.Stdout)/float64(b.N), "ns/fetch")
	})
}

func fetchNS(b *testing.B, out string) float64 {
	b.Helper()
	v, err := strconv.ParseFloat(strings.TrimSpace(out), 64)
	if err != nil {
		b.Fatalf("fetch loop printed %q", out)
	}
	return v
}

// BenchmarkEgressCall is one whole call of wc with and without a host list, side by side: the
// difference is what the egress path adds to every call (lo up, the listener, its hand-over to
// serve, the accept loop and its end), whether or not the command uses the network.
func BenchmarkEgressCall(b *testing.B) {
	for _, mode := range []string{"network = false", "host list"} {
		b.Run(mode, func(b *testing.B) {
			var serveConn func(net.Conn)
			if mode == "host list" {
				serveConn = func(c net.Conn) { c.Close() }
			}
			e := egressExecutor(b, serveConn)
			args, _ := json.Marshal(map[string]any{"command": "wc", "args": []string{}})
			call := executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10}
			for b.Loop() {
				res, err := e.run(context.Background(), call)
				if err != nil || res.ExitCode != 0 {
					b.Fatalf("%v %+v", err, res)
				}
			}
		})
	}
}
