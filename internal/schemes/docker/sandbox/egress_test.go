package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// No traffic leaves this machine: the "remote" hosts are servers on the host's loopback, the
// proxy maps names to them with a resolver the test controls, and containers have no network
// (only the proxy's socket), so even a broken build cannot send a packet anywhere.

// testResolver maps names to loopback.
type testResolver map[string][]netip.Addr

func (r testResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// indexServer stands in for a package index: /simple/demo/ links a file, which it serves;
// hits counts every request it answers (the detector for the forbidden one).
type indexServer struct {
	http, https *httptest.Server
	hits        atomic.Int64
}

func newIndex(t *testing.T) *indexServer {
	s := &indexServer{}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		switch r.URL.Path {
		case "/simple/demo/":
			fmt.Fprint(w, `<html><body><a href="/files/demo-1.0.tar.gz">demo-1.0.tar.gz</a></body></html>`)
		case "/files/demo-1.0.tar.gz":
			fmt.Fprint(w, "DEMO-PACKAGE-BYTES")
		default:
			fmt.Fprintf(w, "index at %s", r.Host)
		}
	})
	s.http, s.https = httptest.NewServer(h), httptest.NewTLSServer(h)
	t.Cleanup(s.http.Close)
	t.Cleanup(s.https.Close)
	return s
}

func port(s *httptest.Server) int { return s.Listener.Addr().(*net.TCPAddr).Port }

// egressProgram runs in the container: a pip-download-style fetch through the proxy the
// environment names, an unlisted host, raw connects and a DNS lookup. It prints JSON.
// The test image's python3-minimal has no urllib.request, http or json: the program speaks
// HTTP through the proxy the environment names with sockets, as pip's client would.
const egressProgram = `import os, re, socket, ssl
proxy = re.match(r"http://([^:/]+):(\d+)", os.environ.get("HTTPS_PROXY", ""))
ctx = ssl._create_unverified_context()  # the stand-in servers' certificate names example.com
def recvall(s):
    b = b""
    while True:
        c = s.recv(65536)
        if not c:
            return b
        b += c
def fetch(url):
    try:
        scheme, host, port, path = re.match(r"(https?)://([^/:]+):(\d+)(/.*)", url).groups()
        s = socket.create_connection((proxy.group(1), int(proxy.group(2))), timeout=10)
        req = "GET %%s HTTP/1.1\r\nHost: %%s:%%s\r\nConnection: close\r\n\r\n"
        if scheme == "http":
            s.sendall((req %% (url, host, port)).encode())
        else:
            s.sendall(("CONNECT %%s:%%s HTTP/1.1\r\nHost: %%s:%%s\r\n\r\n" %% (host, port, host, port)).encode())
            head = b""
            while b"\r\n\r\n" not in head:
                c = s.recv(1)
                if not c:
                    break
                head += c
            if head.split()[1] != b"200":
                return ["error", "tunnel refused: " + head.decode().splitlines()[0]]
            s = ctx.wrap_socket(s, server_hostname=host)
            s.sendall((req %% (path, host, port)).encode())
        head, _, body = recvall(s).partition(b"\r\n\r\n")
        return [int(head.split()[1]), body.decode()]
    except Exception as e:
        return ["error", repr(e)]
def q(v):
    if isinstance(v, list):
        return "[" + ", ".join(q(x) for x in v) + "]"
    if isinstance(v, int):
        return str(v)
    if v is None:
        return "null"
    return '"' + "".join(c if c.isalnum() or c in " .,:;/-_=<>()[]'!?@+*#&" else "\\u%%04x" %% ord(c) for c in str(v)) + '"'
out = {"net": sorted(os.listdir("/sys/class/net")), "proxy": os.environ.get("HTTPS_PROXY")}
A, T, F, FT = %d, %d, %d, %d
out["index"] = fetch("http://pypi.test:%%d/simple/demo/" %% A)
m = re.search(r'href="([^"]+)"', str(out["index"][1]))
out["file"] = fetch("http://pypi.test:%%d%%s" %% (A, m.group(1))) if m else None
out["tls"] = fetch("https://pypi.test:%%d/simple/demo/" %% T)
out["unlisted_http"] = fetch("http://forbidden.test:%%d/" %% F)
out["unlisted_tls"] = fetch("https://forbidden.test:%%d/" %% FT)
def raw(host, port):
    s = socket.socket()
    s.settimeout(3)
    try:
        s.connect((host, port))
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        return "connected: " + s.recv(100).decode(errors="replace")
    except Exception as e:
        return "failed: " + repr(e)
    finally:
        s.close()
out["raw_loopback"] = raw("127.0.0.1", F)
out["ip_literal"] = fetch("http://127.0.0.1:%%d/" %% F)
def fronted():  # CONNECT to the listed name, TLS naming the forbidden one (domain fronting)
    try:
        s = socket.create_connection((proxy.group(1), int(proxy.group(2))), timeout=10)
        s.sendall(("CONNECT pypi.test:%%d HTTP/1.1\r\nHost: pypi.test:%%d\r\n\r\n" %% (T, T)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += s.recv(1)
        s = ctx.wrap_socket(s, server_hostname="forbidden.test")
        s.sendall(b"GET / HTTP/1.1\r\nHost: forbidden.test\r\nConnection: close\r\n\r\n")
        return "fetched: " + recvall(s).decode(errors="replace")[:60]
    except Exception as e:
        return "failed: " + repr(e)
out["fronted"] = fronted()
try:
    out["dns"] = "resolved: %%s" %% socket.getaddrinfo("pypi.test", 80)
except Exception as e:
    out["dns"] = "failed: " + repr(e)
print("{" + ", ".join(q(k) + ": " + q(v) for k, v in out.items()) + "}")
`

type egressOut struct {
	Net          []string
	Proxy        string
	Index, File  []any
	TLS          []any
	UnlistedHTTP []any  `json:"unlisted_http"`
	UnlistedTLS  []any  `json:"unlisted_tls"`
	RawLoopback  string `json:"raw_loopback"`
	IPLiteral    []any  `json:"ip_literal"`
	Fronted      string
	DNS          string
}

func runEgress(t *testing.T, e *Executor, allowed, forbidden *indexServer) egressOut {
	t.Helper()
	code := fmt.Sprintf(egressProgram, port(allowed.http), port(allowed.https), port(forbidden.http), port(forbidden.https))
	r := mustCall(t, e, ToolPython, map[string]any{"code": code})
	if r.ExitCode != 0 {
		t.Fatalf("egress program: %+v", r)
	}
	t.Logf("egress program ran in %d ms", r.DurationMS)
	var out egressOut
	if err := json.Unmarshal([]byte(r.Stdout), &out); err != nil {
		t.Fatalf("egress program output %q: %v (stderr %q)", r.Stdout, err, r.Stderr)
	}
	return out
}

func egressPolicy(t *testing.T, hosts ...string) *policy.Policy {
	n, err := policy.NetworkHosts(hosts...)
	if err != nil {
		t.Fatal(err)
	}
	return testPolicy(func(p *policy.Policy) {
		dksec.Of(p).SetNet(n)
		p.Audit.Path = filepath.Join(t.TempDir(), "audit.jsonl")
	})
}

func newEgressExec(t *testing.T, p *policy.Policy) *Executor {
	t.Helper()
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	return newExecOpts(t, p, Options{Engine: needEngine(t), EgressResolver: testResolver{"pypi.test": lo, "forbidden.test": lo}, TestOnlyEgressAllowLoopback: true})
}

func auditEntries(t *testing.T, path string) []audit.Entry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer f.Close()
	if _, err := audit.Verify(f); err != nil {
		t.Errorf("audit chain: %v", err)
	}
	f.Seek(0, 0)
	var es []audit.Entry
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e audit.Entry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		es = append(es, e)
	}
	return es
}

// docker.network = [host list]: a listed name is fetched through the proxy (plain HTTP and
// HTTPS), an unlisted one gets 403 naming the rule, the container has no interface but
// loopback and no DNS, and the forbidden server's counter stays 0. Decisions are audited.
func TestEgressHostList(t *testing.T) {
	allowed, forbidden := newIndex(t), newIndex(t)
	for _, pool := range []int{0, 1} {
		t.Run(fmt.Sprintf("pool=%d", pool), func(t *testing.T) {
			p := egressPolicy(t, fmt.Sprintf("pypi.test:%d", port(allowed.http)), fmt.Sprintf("pypi.test:%d", port(allowed.https)))
			dksec.Of(p).Pool = pool
			e := newEgressExec(t, p)
			before := allowed.hits.Load()
			out := runEgress(t, e, allowed, forbidden)
			if fmt.Sprint(out.Net) != "[lo]" || out.Proxy != "http://127.0.0.1:3128" {
				t.Errorf("container network %v, HTTPS_PROXY %q", out.Net, out.Proxy)
			}
			if fmt.Sprint(out.Index[0]) != "200" || !strings.Contains(fmt.Sprint(out.Index[1]), "demo-1.0.tar.gz") ||
				fmt.Sprint(out.File) != "[200 DEMO-PACKAGE-BYTES]" {
				t.Errorf("listed index over http: index %v, file %v", out.Index, out.File)
			}
			if fmt.Sprint(out.TLS[0]) != "200" {
				t.Errorf("listed index over https: %v", out.TLS)
			}
			if n := allowed.hits.Load() - before; n != 3 {
				t.Errorf("allowed server answered %d requests, want 3", n)
			}
			want := fmt.Sprintf(`mcpsandbox: egress to forbidden.test:%d denied: not in docker.network (add "forbidden.test:%d" to allow it)`, port(forbidden.http), port(forbidden.http))
			if fmt.Sprint(out.UnlistedHTTP[0]) != "403" || strings.TrimSpace(fmt.Sprint(out.UnlistedHTTP[1])) != want {
				t.Errorf("unlisted over http: %v, want 403 %q", out.UnlistedHTTP, want)
			}
			if fmt.Sprint(out.UnlistedTLS[0]) != "error" || !strings.Contains(fmt.Sprint(out.UnlistedTLS[1]), "403") {
				t.Errorf("unlisted over https: %v, want the tunnel refused with 403", out.UnlistedTLS)
			}
			if !strings.HasPrefix(out.RawLoopback, "failed") {
				t.Errorf("raw connect to the forbidden server's port: %s", out.RawLoopback)
			}
			if fmt.Sprint(out.IPLiteral[0]) != "403" || !strings.Contains(fmt.Sprint(out.IPLiteral[1]), "IP address not in docker.network") {
				t.Errorf("IP literal through the proxy: %v", out.IPLiteral)
			}
			if !strings.HasPrefix(out.Fronted, "failed") {
				t.Errorf("CONNECT pypi.test with TLS naming forbidden.test: %s", out.Fronted)
			}
			if !strings.HasPrefix(out.DNS, "failed") {
				t.Errorf("DNS from the container: %s", out.DNS)
			}
			if n := forbidden.hits.Load(); n != 0 {
				t.Errorf("forbidden server answered %d requests, want 0", n)
			}
			// Layers and tool descriptions name the reachable hosts
			var netLayer string
			for _, l := range e.Layers() {
				if l.Name == LayerNetwork {
					netLayer = fmt.Sprintf("%v %s", l.Active, l.Detail)
				}
			}
			if !strings.HasPrefix(netLayer, "true none") || !strings.Contains(netLayer, fmt.Sprintf("pypi.test:%d", port(allowed.https))) {
				t.Errorf("network layer: %s", netLayer)
			}
			if d := tool(e, ToolShell).Description; !strings.Contains(d, "HTTP(S) to pypi.test:") {
				t.Errorf("tool description: %s", d)
			}
			e.Close() // flushes the proxy's decisions
			var ok, denied int
			for _, a := range auditEntries(t, p.Audit.Path) {
				if a.Tool != egress.AuditTool {
					continue
				}
				switch {
				case a.Decision == egress.AuditAllowed && strings.HasPrefix(a.Rule, "pypi.test:"):
					ok++
				case a.Decision == egress.AuditDenied && a.Rule == "docker.network" && strings.Contains(a.Reason, `add "forbidden.test:`):
					denied++
				}
			}
			var sni int
			for _, a := range auditEntries(t, p.Audit.Path) {
				if a.Tool == egress.AuditTool && a.Decision == egress.AuditDenied && a.Rule == egress.RuleSNI {
					sni++
				}
			}
			if ok != 3 || denied != 2 || sni != 1 {
				t.Errorf("audit: %d allowed, %d not-listed and %d SNI denials, want 3, 2 and 1", ok, denied, sni)
			}
		})
	}
}

// Negative controls: the detectors fire when the list is widened (forbidden.test listed: its
// counter moves) and when the container has a network (host network: the raw connect to the
// forbidden server's loopback port reaches it).
func TestEgressControls(t *testing.T) {
	allowed, forbidden := newIndex(t), newIndex(t)
	p := egressPolicy(t, fmt.Sprintf("pypi.test:%d", port(allowed.http)), fmt.Sprintf("forbidden.test:%d", port(forbidden.http)))
	e := newEgressExec(t, p)
	out := runEgress(t, e, allowed, forbidden)
	if fmt.Sprint(out.UnlistedHTTP[0]) != "200" || forbidden.hits.Load() == 0 {
		t.Errorf("control (forbidden.test listed): %v, hits %d: the counter must fire", out.UnlistedHTTP, forbidden.hits.Load())
	}
	before := forbidden.hits.Load()
	h := newEgressExec(t, testPolicy(func(p *policy.Policy) { dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "host"}) }))
	out = runEgress(t, h, allowed, forbidden)
	if !strings.HasPrefix(out.RawLoopback, "connected") || forbidden.hits.Load() == before {
		t.Errorf("control (host network): raw connect %s, hits %d: the raw probe must reach the server", out.RawLoopback, forbidden.hits.Load()-before)
	}
}

// The executor's socket directory is private (0700, in a 0700 base), holds nothing until a
// container is made, and Close removes it; a host list with a remote engine is refused with
// what to do.
func TestEgressLifecycle(t *testing.T) {
	publicTempDir(t)
	p := egressPolicy(t, "pypi.test")
	e := newEgressExec(t, p)
	dir := e.egress.dir
	for _, d := range []string{egressBase(), dir} {
		if st, err := os.Stat(d); err != nil || st.Mode().Perm() != 0o700 {
			t.Fatalf("%s: %v %v, want a 0700 directory", d, st.Mode(), err)
		}
	}
	if filepath.Dir(dir) != egressBase() {
		t.Errorf("executor directory %s not in %s", dir, egressBase())
	}
	e.Close()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("socket directory left after Close: %v", err)
	}
	eng := needEngine(t)
	remote := *eng
	remote.Host, remote.Source = "tcp://192.0.2.1:2376", "DOCKER_HOST"
	if _, err := New(p, Options{Engine: &remote}); err == nil || !strings.Contains(err.Error(), "need the engine on this machine") {
		t.Errorf("remote engine: %v", err)
	}
}

// publicTempDir makes TMPDIR a fresh directory anyone may pass (like /tmp) and unsets
// XDG_RUNTIME_DIR, so the egress base lies in it: whether another user can reach a socket then
// depends on serve's own directories alone. It returns the directory.
func publicTempDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "mcpsandbox-egress-test-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	t.Setenv("TMPDIR", d)
	t.Setenv("XDG_RUNTIME_DIR", "")
	return d
}

// callSession is call with the call's session set, as serve sets it.
func callSession(t *testing.T, e *Executor, session, code string) (*executor.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(map[string]any{"code": code})
	ctx, cancel := context.WithTimeout(context.Background(), e.pol.Limits.Timeout.Duration)
	defer cancel()
	return tool(e, ToolPython).Run(ctx, executor.Call{Args: raw, Timeout: e.pol.Limits.Timeout.Duration, MaxOutput: int(e.pol.Limits.MaxOutputBytes), Session: session})
}

// fetchProgram fetches http://pypi.test:PORT/PATH through the proxy and prints the status and
// the body's first line.
const fetchProgram = `import os, re, socket
proxy = re.match(r"http://([^:/]+):(\d+)", os.environ["HTTP_PROXY"])
s = socket.create_connection((proxy.group(1), int(proxy.group(2))), timeout=15)
s.sendall(b"GET http://pypi.test:%d%s HTTP/1.1\r\nHost: pypi.test:%d\r\nConnection: close\r\n\r\n")
b = b""
while True:
    c = s.recv(65536)
    if not c:
        break
    b += c
head, _, body = b.partition(b"\r\n\r\n")
print(head.split()[1].decode() if len(head.split()) > 1 else "closed", body.decode(errors="replace").splitlines()[:1])
`

// holdProgram opens N connections through the proxy, each a request the server holds, then
// reads every answer and prints how many got which status ("200=32 503=268").
const holdProgram = `import os, re, socket
proxy = re.match(r"http://([^:/]+):(\d+)", os.environ["HTTP_PROXY"])
N, PORT = %d, %d
socks = []
for i in range(N):
    s = socket.create_connection((proxy.group(1), int(proxy.group(2))), timeout=60)
    s.sendall(("GET http://pypi.test:%%d/hold HTTP/1.1\r\nHost: pypi.test:%%d\r\nConnection: close\r\n\r\n" %% (PORT, PORT)).encode())
    socks.append(s)
codes = {}
for s in socks:
    b = b""
    try:
        while b"\r\n" not in b:
            c = s.recv(4096)
            if not c:
                break
            b += c
        f = b.split()
        k = f[1].decode() if len(f) > 1 else "closed"
    except Exception as e:
        k = type(e).__name__
    codes[k] = codes.get(k, 0) + 1
print(" ".join("%%s=%%d" %% kv for kv in sorted(codes.items())))
`

// holdServer answers /hold only when released (counting the requests it holds), anything else
// at once.
type holdServer struct {
	*httptest.Server
	held    atomic.Int64
	max     atomic.Int64 // the most held at once
	release chan struct{}
	once    sync.Once
}

func newHoldServer(t *testing.T) *holdServer {
	h := &holdServer{release: make(chan struct{})}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/hold" {
			n := h.held.Add(1)
			for m := h.max.Load(); n > m && !h.max.CompareAndSwap(m, n); m = h.max.Load() {
			}
			defer h.held.Add(-1)
			select {
			case <-h.release:
			case <-r.Context().Done():
			}
		}
		fmt.Fprintf(w, "answered %s\n", r.URL.Path)
	}))
	t.Cleanup(h.Close)
	t.Cleanup(h.free) // runs first
	return h
}

func (h *holdServer) free() { h.once.Do(func() { close(h.release) }) }

// One container holding more egress connections than every bound (its own and the one across
// containers) does not make another session's fetch fail: past its own bound its connections
// are answered 503, and the other container's fetch is answered 200. Decisions carry each
// call's session.
func TestEgressOneSandboxCannotStarve(t *testing.T) {
	hold := newHoldServer(t)
	p := egressPolicy(t, fmt.Sprintf("pypi.test:%d", port(hold.Server)))
	p.Limits.Timeout = policy.Duration{Duration: 60 * time.Second}
	e := newEgressExec(t, p)
	quota, total := e.egress.quota, e.egress.share.max
	if quota != DefaultEgressConns {
		t.Fatalf("per-container bound %d, want the default %d", quota, DefaultEgressConns)
	}
	n := total + 44 // past the bound across containers too: the mutant's one shared pool
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	g0 := runtime.NumGoroutine()
	type res struct {
		r   *executor.Result
		err error
	}
	held := make(chan res, 1)
	go func() {
		r, err := callSession(t, e, "session-holder", fmt.Sprintf(holdProgram, n, port(hold.Server)))
		held <- res{r, err}
	}()
	// wait until every connection of the holder reached serve, and those let through reached
	// the server
	accepted := func() (n int64) {
		e.egress.bmu.Lock()
		defer e.egress.bmu.Unlock()
		for b := range e.egress.boxes {
			n += b.conns.Load()
		}
		return n
	}
	deadline := time.Now().Add(40 * time.Second)
	for time.Now().Before(deadline) && accepted() < int64(n) {
		time.Sleep(50 * time.Millisecond)
	}
	last, since := int64(-1), time.Now()
	for time.Now().Before(deadline) {
		c := hold.held.Load()
		if c != last {
			last, since = c, time.Now()
		} else if c >= int64(quota) && time.Since(since) > 300*time.Millisecond {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("the holder opened %d connections and holds %d (bound %d per container, %d in all)", accepted(), last, quota, total)
	if last < int64(quota) || accepted() < int64(n) {
		hold.free()
		t.Fatalf("the holder never opened its %d connections (%d) or held its bound's worth (%d)", n, accepted(), last)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("while held (this process: proxy and stand-in server): %+d goroutines, heap %+.1f MiB",
		runtime.NumGoroutine()-g0, float64(int64(m1.HeapInuse)-int64(m0.HeapInuse))/(1<<20))
	start := time.Now()
	r, err := callSession(t, e, "session-other", fmt.Sprintf(fetchProgram, port(hold.Server), "/simple/demo/", port(hold.Server)))
	if err != nil || r.ExitCode != 0 || !strings.HasPrefix(r.Stdout, "200 ['answered /simple/demo/']") {
		t.Errorf("another session's fetch while one container holds %d connections: %+v %v", last, r, err)
	}
	t.Logf("the other session's call took %v", time.Since(start))
	if m := hold.max.Load(); m > int64(quota) {
		t.Errorf("one container held %d connections at once, past its bound of %d", m, quota)
	}
	hold.free()
	h := <-held
	if h.err != nil || h.r.ExitCode != 0 {
		t.Fatalf("holder: %+v %v", h.r, h.err)
	}
	// past its bound: 503, or (a refusal from internal/serve/egress, which closes without reading the
	// request: the relay then sees a reset) a closed connection
	got := map[string]int{}
	for _, f := range strings.Fields(h.r.Stdout) {
		k, v, _ := strings.Cut(f, "=")
		var x int
		fmt.Sscan(v, &x)
		got[k] = x
	}
	if got["200"] != quota || got["200"]+got["503"]+got["closed"] != n {
		t.Errorf("holder's answers: %q, want 200=%d and the other %d 503 (or closed)", h.r.Stdout, quota, n-quota)
	}
	e.Close()
	// decisions past the log rate arrive as summaries (rule log-rate) counting them: the holder's
	// allowed and denied decisions are those logged one by one plus those summarised
	counts := map[string]int{}
	for _, a := range auditEntries(t, p.Audit.Path) {
		if a.Tool != egress.AuditTool {
			continue
		}
		if a.Decision == egress.AuditSummary {
			var sum struct{ Denied, Allowed int }
			if err := json.Unmarshal(a.Arguments, &sum); err != nil {
				t.Fatalf("summary arguments %s: %v", a.Arguments, err)
			}
			counts[a.Session+" summarised denied"] += sum.Denied
			counts[a.Session+" summarised allowed"] += sum.Allowed
			continue
		}
		counts[a.Session+" "+a.Decision+" "+a.Rule]++
	}
	t.Logf("audit: %v", counts)
	allowedRule := "allowed pypi.test:" + fmt.Sprint(port(hold.Server))
	if counts["session-other "+allowedRule] != 1 ||
		counts["session-holder "+allowedRule]+counts["session-holder summarised allowed"] != quota ||
		counts["session-holder denied "+egress.RuleLimit]+counts["session-holder summarised denied"] != n-quota {
		t.Errorf("audit by session: %v", counts)
	}
}
