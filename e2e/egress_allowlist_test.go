package e2e

// Network by name for the allowlist scheme (issue 14): a real serve, a real pip, curl and
// Python inside the sandbox, a local "index" standing in for PyPI and a "forbidden" server, all
// on loopback. The binary is the one every other test runs; names are mapped to the servers
// through the stand-in test hook MCPSANDBOX_EGRESS_STANDINS (internal/serve/egress/standins.go), which
// re-opens exactly the servers' ip:ports and nothing else on loopback.

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// countingServer is a loopback TLS (and optionally plain HTTP) server that counts every TCP
// connection that reaches it, before any byte is read: a detector outside the sandbox.
type countingServer struct {
	name          string
	tlsPort, port int
	conns         atomic.Int64
	reqs          atomic.Int64
}

type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

func startCounting(t testing.TB, name string, cert tls.Certificate, h http.Handler) *countingServer {
	t.Helper()
	s := &countingServer{name: name}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.reqs.Add(1); h.ServeHTTP(w, r) })
	for _, useTLS := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		var l net.Listener = countingListener{ln, &s.conns}
		if useTLS {
			s.tlsPort = port
			l = tls.NewListener(l, &tls.Config{Certificates: []tls.Certificate{cert}})
		} else {
			s.port = port
		}
		srv := &http.Server{Handler: wrapped, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(l)
		t.Cleanup(func() { srv.Close() })
	}
	return s
}

// standIns is the MCPSANDBOX_EGRESS_STANDINS entries mapping the server's name to both its
// ports (each re-opened past the proxy's loopback denial).
func (s *countingServer) standIns() []string {
	return []string{fmt.Sprintf("%s=127.0.0.1:%d", s.name, s.tlsPort), fmt.Sprintf("%s=127.0.0.1:%d", s.name, s.port)}
}

// testCA makes a CA and a server certificate for the test names; caPEM is what the sandboxed
// clients trust.
func testCA(t testing.TB, names ...string) (tls.Certificate, []byte) {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcpsandbox e2e CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key},
		pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}

// tinyWheel is a minimal valid wheel of package tinypkg 1.0.
func tinyWheel(t testing.TB) []byte {
	t.Helper()
	files := []struct{ name, body string }{
		{"tinypkg/__init__.py", "VALUE = 42\n"},
		{"tinypkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n"},
		{"tinypkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: mcpsandbox-e2e\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, _ := z.Create(f.name)
		w.Write([]byte(f.body))
		sum := sha256.Sum256([]byte(f.body))
		fmt.Fprintf(&record, "%s,sha256=%s,%d\n", f.name, base64.RawURLEncoding.EncodeToString(sum[:]), len(f.body))
	}
	record.WriteString("tinypkg-1.0.dist-info/RECORD,,\n")
	w, _ := z.Create("tinypkg-1.0.dist-info/RECORD")
	w.Write([]byte(record.String()))
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// egressEnv is one serve with a host list, its servers and detectors.
type egressEnv struct {
	t                 testing.TB
	ws                string
	index, files, bad *countingServer
	udpPkts           atomic.Int64
	udpPort           int
	auditPath         string
	cs                *mcp.ClientSession
	stderr            *lockedBuffer
	hasCurl           bool
}

const egressFile = "hello from the local index"

// newEgressEnv starts the servers and a serve whose network key is hosts(env) (TOML text).
func newEgressEnv(t testing.TB, hosts func(*egressEnv) string) *egressEnv {
	t.Helper()
	env := &egressEnv{t: t, stderr: &lockedBuffer{}}
	cert, caPEM := testCA(t, "index.test", "files.test", "forbidden.test")
	wheel := tinyWheel(t)
	wheelSum := sha256.Sum256(wheel)
	env.files = startCounting(t, "files.test", cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/packages/tinypkg-1.0-py3-none-any.whl" {
			http.NotFound(w, r)
			return
		}
		w.Write(wheel)
	}))
	env.index = startCounting(t, "index.test", cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/tinypkg/":
			fmt.Fprintf(w, `<html><body><a href="https://files.test:%d/packages/tinypkg-1.0-py3-none-any.whl#sha256=%s">tinypkg-1.0-py3-none-any.whl</a></body></html>`,
				env.files.tlsPort, hex.EncodeToString(wheelSum[:]))
		case "/file.txt":
			w.Write([]byte(egressFile))
		default:
			http.NotFound(w, r)
		}
	}))
	env.bad = startCounting(t, "forbidden.test", cert, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("FORBIDDEN SERVER REACHED"))
	}))
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	env.udpPort = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			env.udpPkts.Add(1)
		}
	}()

	parent, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-egress-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(parent) })
	os.Chmod(parent, 0o755)
	env.ws = mkdir(t, parent, "ws", 0o777)
	os.Chown(env.ws, 65534, 65534)
	home := mkdir(t, parent, "home", 0o755)
	write(t, filepath.Join(env.ws, "ca.pem"), string(caPEM), 0o644)

	p := policy.Default(alsec.Name)
	p.Name = "e2e-egress"
	p.Limits.Timeout = policy.Duration{Duration: 60 * time.Second}
	p.Limits.Memory = 2 << 30 // pip under RLIMIT_AS
	alsec.Of(p).Workspace = env.ws
	env.auditPath = filepath.Join(parent, "audit.jsonl")
	p.Audit.Path = env.auditPath
	for _, n := range []string{python, "curl"} {
		c, err := generate.Pin(n)
		if err != nil {
			if n == "curl" {
				continue // curl is optional: python and pip carry the test
			}
			t.Fatalf("pin %s: %v", n, err)
		}
		if n == python {
			c.Name = "python3"
		} else {
			env.hasCurl = true
		}
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	}
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.Contains(text, "network = false") {
		t.Fatalf("policy text has no `network = false` to replace:\n%s", text)
	}
	text = strings.Replace(text, "network = false", "network = "+hosts(env), 1)
	policyPath := filepath.Join(parent, "policy.toml")
	write(t, policyPath, text, 0o644)

	// Every server, the forbidden one included, is re-opened by the hook: what keeps the sandbox
	// from it is the host list alone (its denials must name allowlist.network, not loopback).
	standIns := slices.Concat(env.index.standIns(), env.files.standIns(), env.bad.standIns())
	cmd := exec.Command(binPath, "serve", "--policy", policyPath, "--log-level", "debug")
	cmd.Env = append(os.Environ(), "HOME="+home, "MCPSANDBOX_EGRESS_STANDINS="+strings.Join(standIns, ","))
	cmd.Stderr = env.stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("policy:\n%s\nserve stderr:\n%s", text, env.stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	env.cs = cs
	t.Cleanup(func() { cs.Close() })
	return env
}

// listed is the host list of the tests: the index and its files host, by name and port.
func listed(e *egressEnv) string {
	return fmt.Sprintf(`["index.test:%d", "index.test:%d", "files.test:%d"]`, e.index.tlsPort, e.index.port, e.files.tlsPort)
}

func (e *egressEnv) call(command string, args ...string) (*mcp.CallToolResult, executor.Result) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := e.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command",
		Arguments: map[string]any{"command": command, "args": args}})
	if err != nil {
		e.t.Fatalf("tools/call %s: %v", command, err)
	}
	var r executor.Result
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
	} else {
		e.t.Fatalf("tools/call %s %q refused: %s", command, args, text(res))
	}
	return res, r
}

// fetchPy fetches each URL through the proxy variables, as Python's urllib does, and prints one
// JSON line per URL: {"url", "status", "body"} or {"url", "error"}.
const fetchPy = `
import sys, json, ssl, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile="ca.pem")
for u in sys.argv[1:]:
    out = {"url": u}
    try:
        r = urllib.request.urlopen(u, timeout=15, context=ctx)
        out["status"], out["body"] = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        out["status"], out["body"] = e.code, e.read().decode()
    except Exception as e:
        out["error"] = repr(e)
    print(json.dumps(out), flush=True)
`

type fetched struct {
	URL    string `json:"url"`
	Status int    `json:"status"`
	Body   string `json:"body"`
	Error  string `json:"error"`
}

func (e *egressEnv) fetch(urls ...string) map[string]fetched {
	e.t.Helper()
	_, r := e.call("python3", append([]string{"-c", fetchPy}, urls...)...)
	out := map[string]fetched{}
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		var f fetched
		if json.Unmarshal([]byte(l), &f) == nil {
			out[f.URL] = f
		}
	}
	if len(out) != len(urls) {
		e.t.Fatalf("fetch printed %d results for %d URLs: exit %d\nstdout %s\nstderr %s", len(out), len(urls), r.ExitCode, r.Stdout, r.Stderr)
	}
	return out
}

// escapePy tries every way out that is not the proxy; each line is "name: outcome".
const escapePy = `
import socket, struct, sys, errno
bad_port, udp_port = int(sys.argv[1]), int(sys.argv[2])
def attempt(name, f):
    try:
        print(name + ": " + str(f()))
    except OSError as e:
        print(name + ": " + (errno.errorcode.get(e.errno) or repr(e)))
    except Exception as e:
        print(name + ": " + repr(e))
attempt("raw-tcp", lambda: socket.create_connection(("127.0.0.1", bad_port), timeout=3) and "connected")
q = struct.pack(">HHHHHH", 0x1234, 0x0100, 1, 0, 0, 0) + b"\x09forbidden\x04test\x00\x00\x01\x00\x01"
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(q, ("127.0.0.1", udp_port))
    return "sent"
attempt("udp-dns", udp)
if sys.argv[3:] == ["resolve"]:  # only where the sandbox has no route: a resolver query must not leave the machine
    attempt("resolve", lambda: socket.getaddrinfo("forbidden.test", bad_port))
`

// trickPy asks the proxy, by hand, for a listed host and then tries to use the tunnel for
// something else: TLS naming another host (domain fronting; the test's certificate covers every
// test name, so only the proxy's SNI check stops it), a protocol that is not TLS, and bytes that
// are not HTTP at all. Each line is "name: outcome".
const trickPy = `
import os, socket, ssl, sys
port = int(sys.argv[1])
proxy = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
def tunnel():
    s = socket.create_connection((proxy[0], int(proxy[1])), timeout=5)
    s.sendall(b"CONNECT index.test:%d HTTP/1.1\r\nHost: index.test:%d\r\n\r\n" % (port, port))
    head = s.recv(4096).split(b"\r\n")[0].decode()
    return s, head
def attempt(name, f):
    try:
        print(name + ": " + str(f()), flush=True)
    except Exception as e:
        print(name + ": " + type(e).__name__, flush=True)
def fronted():
    s, head = tunnel()
    t = ssl.create_default_context(cafile="ca.pem").wrap_socket(s, server_hostname="forbidden.test")
    t.sendall(b"GET /file.txt HTTP/1.1\r\nHost: forbidden.test\r\nConnection: close\r\n\r\n")
    return head + " then " + t.recv(200).decode(errors="replace")
def not_tls():
    s, head = tunnel()
    s.sendall(b"GET /file.txt HTTP/1.1\r\nHost: index.test\r\nConnection: close\r\n\r\n")
    return head + " then " + repr(s.recv(200))
def garbage():
    s = socket.create_connection((proxy[0], int(proxy[1])), timeout=5)
    s.sendall(b"SSH-2.0-OpenSSH_9.2\r\n\r\n")
    return s.recv(200).split(b"\r\n")[0].decode()
attempt("fronted", fronted)
attempt("not-tls", not_tls)
attempt("garbage", garbage)
`

func TestEgressAllowlistByName(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Log("not root: serve will use a user namespace for the call's network namespace")
	}
	e := newEgressEnv(t, listed)
	idx, bad := e.index, e.bad

	// A listed name works, over HTTPS (CONNECT) and plain HTTP (forward).
	listedTLS := fmt.Sprintf("https://index.test:%d/file.txt", idx.tlsPort)
	listedPlain := fmt.Sprintf("http://index.test:%d/file.txt", idx.port)
	unlistedPlain := fmt.Sprintf("http://forbidden.test:%d/", bad.port)
	unlistedTLS := fmt.Sprintf("https://forbidden.test:%d/", bad.tlsPort)
	ipLiteral := fmt.Sprintf("http://127.0.0.1:%d/", bad.port)
	ipLiteralTLS := fmt.Sprintf("https://127.0.0.1:%d/", bad.tlsPort)
	wrongPort := fmt.Sprintf("http://index.test:%d/file.txt", bad.port) // listed name, unlisted port
	got := e.fetch(listedTLS, listedPlain, unlistedPlain, unlistedTLS, ipLiteral, ipLiteralTLS, wrongPort)
	t.Logf("fetches: %+v", got)
	for _, u := range []string{listedTLS, listedPlain} {
		if f := got[u]; f.Status != 200 || f.Body != egressFile {
			t.Errorf("listed %s: %+v", u, f)
		}
	}
	if idx.reqs.Load() != 2 {
		t.Errorf("the index saw %d requests, want 2", idx.reqs.Load())
	}
	// An unlisted name over plain HTTP: one clear 403 whose body names the rule.
	for _, u := range []string{unlistedPlain, ipLiteral, wrongPort} {
		if f := got[u]; f.Status != 403 || !strings.Contains(f.Body, "allowlist.network") {
			t.Errorf("%s: want 403 naming allowlist.network, got %+v", u, f)
		}
	}
	// Over HTTPS the 403 answers the CONNECT (urllib reports the tunnel's status).
	for _, u := range []string{unlistedTLS, ipLiteralTLS} {
		if f := got[u]; !strings.Contains(f.Error, "403") {
			t.Errorf("%s: want the CONNECT refused with 403, got %+v", u, f)
		}
	}

	// Every other way out fails inside the sandbox.
	_, r := e.call("python3", "-c", escapePy, fmt.Sprint(bad.port), fmt.Sprint(e.udpPort), "resolve")
	t.Logf("escapes: %s", r.Stdout)
	for _, want := range []string{"raw-tcp: EACCES", "udp-dns: EACCES"} {
		if !strings.Contains(r.Stdout, want) {
			t.Errorf("want %q in %q (stderr %q)", want, r.Stdout, r.Stderr)
		}
	}
	if !strings.Contains(r.Stdout, "resolve: gaierror") {
		t.Errorf("the sandbox resolved a name itself: %q", r.Stdout)
	}

	// The tunnel to a listed host carries only TLS for that host.
	before := idx.reqs.Load()
	_, r = e.call("python3", "-c", trickPy, fmt.Sprint(idx.tlsPort))
	t.Logf("tricks: %s", r.Stdout)
	for _, l := range strings.Split(strings.TrimSpace(r.Stdout), "\n") {
		name, got, _ := strings.Cut(l, ": ")
		if strings.Contains(got, egressFile) || strings.Contains(got, "HTTP/1.1 200 OK") && !strings.HasPrefix(got, "HTTP/1.1 200 Connection") {
			t.Errorf("%s: the tunnel carried a request: %q", name, got)
		}
		if name == "garbage" && !strings.HasPrefix(got, "HTTP/1.1 400") {
			t.Errorf("garbage to the proxy: %q, want a 400", got)
		}
	}
	if n := idx.reqs.Load() - before; n != 0 {
		t.Errorf("BREACH: %d requests reached the index through fronted or non-TLS tunnels", n)
	}

	// A real client: pip downloads a package from the local index through the listed names.
	if out, err := exec.Command(python, "-m", "pip", "--version").CombinedOutput(); err != nil {
		t.Errorf("pip is not installed for %s (%v: %s): the pip download check cannot run; install python3-pip", python, err, out)
	} else {
		e.pipDownload(t)
	}
	// curl, where the host has it, through the same variables.
	if e.hasCurl {
		_, r = e.call("curl", "-sS", "--cacert", "ca.pem", listedTLS)
		if r.ExitCode != 0 || r.Stdout != egressFile {
			t.Errorf("curl %s: exit %d %q %q", listedTLS, r.ExitCode, r.Stdout, r.Stderr)
		}
		_, r = e.call("curl", "-sS", "--cacert", "ca.pem", unlistedTLS)
		if r.ExitCode == 0 || !strings.Contains(r.Stderr, "403") {
			t.Errorf("curl %s: exit %d %q %q", unlistedTLS, r.ExitCode, r.Stdout, r.Stderr)
		}
	}

	// The detectors: nothing reached the forbidden server or the UDP listener.
	if n := bad.conns.Load(); n != 0 {
		t.Errorf("BREACH: the forbidden server saw %d connections", n)
	}
	if n := e.udpPkts.Load(); n != 0 {
		t.Errorf("BREACH: the UDP listener saw %d packets", n)
	}
	e.checkDecisions(t)
}

// checkDecisions: every proxy decision is in serve's log and in the audit log (tool "egress",
// with the call's session), an allowed one with the rule that allowed it, a denial with the rule
// that refused it; and the audit log's chain still verifies.
func (e *egressEnv) checkDecisions(t *testing.T) {
	t.Helper()
	e.checkAudit(t)
	s := e.stderr.String()
	for _, want := range []string{
		fmt.Sprintf(`msg="egress allowed" host=index.test port=%d rule=index.test:%d`, e.index.tlsPort, e.index.tlsPort),
		fmt.Sprintf(`msg="egress denied" host=forbidden.test port=%d rule=allowlist.network`, e.bad.port),
		fmt.Sprintf(`msg="egress denied" host=127.0.0.1 port=%d rule=allowlist.network`, e.bad.port),
	} {
		if !strings.Contains(s, want) {
			t.Errorf("no decision line %q", want)
		}
	}
}

// Negative controls: the detectors fire when the list is widened (the forbidden name listed) or
// the proxy is bypassed (network = true: the sandbox shares the host's network).
func TestEgressAllowlistControls(t *testing.T) {
	t.Run("forbidden name listed", func(t *testing.T) {
		e := newEgressEnv(t, func(e *egressEnv) string {
			return fmt.Sprintf(`["index.test:%d", "forbidden.test:%d"]`, e.index.tlsPort, e.bad.port)
		})
		got := e.fetch(fmt.Sprintf("http://forbidden.test:%d/", e.bad.port))
		t.Logf("fetch: %+v", got)
		if e.bad.conns.Load() == 0 || e.bad.reqs.Load() == 0 {
			t.Errorf("the forbidden server's counter did not fire with its name listed: %d connections", e.bad.conns.Load())
		}
	})
	t.Run("network = true", func(t *testing.T) {
		e := newEgressEnv(t, func(*egressEnv) string { return "true" })
		_, r := e.call("python3", "-c", escapePy, fmt.Sprint(e.bad.port), fmt.Sprint(e.udpPort))
		t.Logf("escapes: %s", r.Stdout)
		if e.bad.conns.Load() == 0 {
			t.Error("the raw TCP detector did not fire with the host's network shared")
		}
		if !eventually(func() bool { return e.udpPkts.Load() > 0 }) {
			t.Error("the UDP detector did not fire with the host's network shared")
		}
	})
}

func (e *egressEnv) checkAudit(t *testing.T) {
	t.Helper()
	b, err := os.ReadFile(e.auditPath)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	type line struct {
		Session   string          `json:"session"`
		Tool      string          `json:"tool"`
		Decision  string          `json:"decision"`
		Rule      string          `json:"rule"`
		Reason    string          `json:"reason"`
		Arguments json.RawMessage `json:"arguments"`
	}
	var allowed, denied []line
	sessions := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var v line
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		if v.Tool != "egress" {
			sessions[v.Session] = true
			continue
		}
		if v.Decision == "allowed" {
			allowed = append(allowed, v)
		} else {
			denied = append(denied, v)
		}
		if v.Session == "" {
			t.Errorf("egress audit line without the call's session: %+v", v)
		}
	}
	has := func(ls []line, host string, port int, rule string) bool {
		for _, l := range ls {
			var a struct {
				Host string `json:"host"`
				Port int    `json:"port"`
			}
			json.Unmarshal(l.Arguments, &a)
			if a.Host == host && a.Port == port && l.Rule == rule && sessions[l.Session] {
				return true
			}
		}
		return false
	}
	if !has(allowed, "index.test", e.index.tlsPort, fmt.Sprintf("index.test:%d", e.index.tlsPort)) {
		t.Errorf("no audit line allowing index.test:%d: %+v", e.index.tlsPort, allowed)
	}
	for _, h := range []string{"forbidden.test", "127.0.0.1"} {
		if !has(denied, h, e.bad.port, "allowlist.network") {
			t.Errorf("no audit line denying %s:%d by allowlist.network: %+v", h, e.bad.port, denied)
		}
	}
	for _, rule := range []string{"tls-sni", "not-tls"} { // the tunnels trickPy misused
		if !has(denied, "index.test", e.index.tlsPort, rule) {
			t.Errorf("no audit line denying index.test:%d by %s: %+v", e.index.tlsPort, rule, denied)
		}
	}
	out, err := exec.Command(binPath, "audit", "verify", e.auditPath).CombinedOutput()
	if err != nil {
		t.Errorf("audit verify: %v\n%s", err, out)
	}
}

// pipDownload: pip fetches the simple index and the wheel through the listed names.
func (e *egressEnv) pipDownload(t *testing.T) {
	t.Helper()
	_, r := e.call("python3", "-m", "pip", "download", "--no-deps", "--no-cache-dir", "--disable-pip-version-check",
		"--index-url", fmt.Sprintf("https://index.test:%d/simple/", e.index.tlsPort), "--cert", "ca.pem", "-d", "dl", "tinypkg")
	t.Logf("pip download: %d ms", r.DurationMS)
	if r.ExitCode != 0 {
		t.Errorf("pip download: exit %d\nstdout %s\nstderr %s", r.ExitCode, r.Stdout, r.Stderr)
	} else if _, err := os.Stat(filepath.Join(e.ws, "dl", "tinypkg-1.0-py3-none-any.whl")); err != nil {
		t.Errorf("pip reported success but the wheel is not in the workspace: %v", err)
	}
	if e.files.reqs.Load() == 0 {
		t.Error("pip never reached the files host")
	}
}

// The harness's network scenarios against a host-list policy: everything contained, the proxy
// bypass scenario included (it reads HTTPS_PROXY and asks the proxy, then goes around it). The
// harness starts serve with its own MCPSANDBOX_EGRESS_STANDINS (its arena's stand-ins only): no
// other name resolves (index.test and files.test below do not), so nothing the scenarios ask the
// proxy for can reach a real resolver, and loopback stays denied but for the stand-ins' ports.
func TestEgressAllowlistHarness(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	ws := mkdir(t, dir, "ws", 0o777)
	p := policy.Default(alsec.Name)
	p.Name = "e2e-egress-harness"
	alsec.Of(p).Workspace = ws
	p.Limits.Memory = 1 << 30
	c, err := generate.Pin(python)
	if err != nil {
		t.Fatal(err)
	}
	c.Name = "python3"
	alsec.Of(p).Commands = []policy.Command{c}
	hosts, err := policy.NetworkHosts("index.test", "files.test:443")
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(hosts)
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "policy.toml")
	write(t, path, string(b), 0o644)
	cmd := exec.Command(binPath, "harness", "--policy", path, "--category", "network", "--json", "--parallel", "2")
	out, stderr, code := runCmd(t, cmd)
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness output: %v\n%s\n%s", err, out, stderr)
	}
	got := outcomes(&rep)
	t.Logf("outcomes: %v", got)
	if code != 0 || len(got[harness.Breach]) > 0 || len(got[harness.Error]) > 0 {
		t.Errorf("harness exit %d: %v\n%s", code, got, stderr)
	}
	if !slices.Contains(got[harness.Contained], "proxy-allowlist-bypass") || !slices.Contains(got[harness.Contained], "dns-exfil") {
		t.Errorf("the proxy bypass and DNS scenarios did not run contained: %v", got)
	}
}
