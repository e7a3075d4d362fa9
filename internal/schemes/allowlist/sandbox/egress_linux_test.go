package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	egressproxy "github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// egressExecutor builds an executor over a fresh workspace with python3 allowlisted; serveConn,
// when not nil, stands in for the egress proxy (the plumbing is what is under test here).
func egressExecutor(t testing.TB, serveConn func(net.Conn), extra ...string) *Executor {
	t.Helper()
	return pythonExecutor(t, serveConn, false, extra...)
}

// pythonExecutor is egressExecutor with the choice of running calls through the exec helper
// even where serve would start them directly.
// pythonExec, when a test sets its fields, changes the next pythonExecutors: their log, the
// python binary they pin (default /usr/bin/python3), and namespaces without a mount namespace.
var pythonExec struct {
	log       *slog.Logger
	python    string
	noMountNS bool
	noLayer   bool     // no transactional workspace, as where overlayfs cannot be mounted on it
	hosts     []string // a host list for the policy, served by the real proxy (serveConn nil)
}

func pythonExecutor(t testing.TB, serveConn func(net.Conn), viaHelper bool, extra ...string) *Executor {
	t.Helper()
	pyPath := "/usr/bin/python3"
	if pythonExec.python != "" {
		pyPath = pythonExec.python
	}
	py, err := generate.Pin(pyPath)
	if err != nil {
		t.Skipf("no python3 to drive the sandbox side: %v", err)
	}
	py.Name = "python3"
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	os.Chmod(filepath.Dir(root), 0o755)
	os.Chmod(root, 0o755)
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o777)
	os.Chown(ws, 65534, 65534)
	p, err := defaultPolicy(ws)
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).Commands = append(alsec.Of(p).Commands, py)
	for _, path := range extra { // allowlisted as "self" (the benchmark's Go client: this test binary)
		c, err := generate.Pin(path)
		if err != nil {
			t.Fatal(err)
		}
		c.Name = "self"
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
		p.Limits.Memory = 4 << 30 // the Go runtime's address-space reservations
	}
	if pythonExec.hosts != nil {
		n, err := policy.NetworkHosts(pythonExec.hosts...)
		if err != nil {
			t.Fatal(err)
		}
		alsec.Of(p).SetNet(n)
	}
	o := Options{HelperPath: exe, viaHelper: viaHelper, Logger: pythonExec.log, noMountNS: pythonExec.noMountNS, noLayer: pythonExec.noLayer}
	o.egressServe = serveConn
	return readyWith(t, p, o)
}

func runPython(t *testing.T, e *Executor, code string) *executor.Result {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"command": "python3", "args": []string{"-c", code}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := e.run(ctx, executor.Call{Args: args, Timeout: 20 * time.Second, MaxOutput: 64 << 10})
	if err != nil {
		t.Fatalf("call: %v", err)
	}
	return res
}

// egressProbe is what the sandboxed program tries: the proxy's port through the proxy
// variable, then every other way out. Each line is "name: outcome".
const egressProbe = `
import os, socket, errno
def attempt(name, f):
    try:
        print(name + ": " + str(f()))
    except OSError as e:
        print(name + ": " + (errno.errorcode.get(e.errno) or str(e)))
def proxy():
    host, port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(b"hello\n")
    return s.makefile().readline().strip()
attempt("proxy", proxy)
attempt("env", lambda: ",".join(k + "=" + os.environ.get(k, "-") for k in ("HTTP_PROXY", "https_proxy", "NO_PROXY", "npm_config_https_proxy", "PIP_PROXY")))
attempt("other-port", lambda: socket.create_connection(("127.0.0.1", PORT), timeout=2) and "connected")
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM) and "socket")
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP) and "socket")
attempt("sctp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM, 132) and "socket")
attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) and "socket")
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0) and "socket")
def bind():
    s = socket.socket()
    s.bind(("127.0.0.1", 8080))
    s.listen()
    return "listening"
attempt("bind", bind)
attempt("resolve", lambda: socket.getaddrinfo("index.test", 443))
def ifdown():
    import fcntl, struct
    fcntl.ioctl(socket.socket(), 0x8914, struct.pack("16sH14x", b"lo", 0))  # SIOCSIFFLAGS: lo down
    return "lo down"
attempt("ifdown", ifdown)
`

func probeLines(t *testing.T, res *executor.Result) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, l := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		k, v, _ := strings.Cut(l, ": ")
		out[k] = v
	}
	if len(out) < 5 {
		t.Fatalf("the probe did not run: exit %d\nstdout %s\nstderr %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	return out
}

// A call with egress reaches serve's handler through 127.0.0.1:EgressPort and nothing else: the
// handler (outside the sandbox) counts what reaches it, a host listener on another loopback
// port counts what reaches that.
func TestEgressPlumbing(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("seccomp filter not built for " + runtime.GOARCH)
	}
	var served atomic.Int64
	e := egressExecutor(t, func(c net.Conn) {
		served.Add(1)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("served " + strings.TrimSpace(line) + "\n"))
	})
	if !e.attr.has(unix.CLONE_NEWNET) {
		t.Fatal("egress executor without a network namespace: the probe should have refused")
	}
	hostLn, hostPort, hostHits := countingListener(t)
	defer hostLn.Close()
	res := runPython(t, e, strings.Replace(egressProbe, "PORT", hostPort, 1))
	got := probeLines(t, res)
	t.Logf("Landlock ABI %d; the sandbox saw: %v", e.probe.LandlockABI, got)
	want := map[string]string{
		"proxy": "served hello",
		"env":   "HTTP_PROXY=http://127.0.0.1:3128,https_proxy=http://127.0.0.1:3128,NO_PROXY=,npm_config_https_proxy=http://127.0.0.1:3128,PIP_PROXY=http://127.0.0.1:3128",
		// Landlock (ABI >= 4) refuses the connect; without it the empty namespace has nobody there.
		"other-port": map[bool]string{true: "EACCES", false: "ECONNREFUSED"}[e.probe.LandlockABI >= 4],
		"udp":        "EACCES", "raw": "EACCES", "sctp": "EACCES", "unix": "EACCES", "netlink": "EACCES",
		"bind":   map[bool]string{true: "EACCES", false: "listening"}[e.probe.LandlockABI >= 4],
		"ifdown": "EPERM", // no CAP_NET_ADMIN left for the command (a non-root serve passes it to the helper)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: got %q, want %q", k, got[k], w)
		}
	}
	if r := got["resolve"]; !strings.Contains(r, "name resolution") && !strings.Contains(r, "Name or service") && !strings.Contains(r, "Errno") {
		t.Errorf("resolve: got %q, want a resolution failure", r)
	}
	for _, l := range e.Layers() {
		if (l.Name == LayerEgressProxy || l.Name == LayerNetNS || l.Name == LayerNetIsolation) && (!l.Active || !strings.Contains(l.Detail, "proxy")) {
			t.Errorf("layer %q with egress: %+v", l.Name, l)
		}
	}
	if n := served.Load(); n != 1 {
		t.Errorf("serve's handler saw %d connections, want 1", n)
	}
	if n := hostHits.Load(); n != 0 {
		t.Errorf("the host's loopback listener was reached %d times from the sandbox", n)
	}
}

// Negative control: the same program under network = false and no egress finds no proxy, and
// the handler's counter does not move.
func TestEgressPlumbingControl(t *testing.T) {
	e := egressExecutor(t, nil)
	res := runPython(t, e, `
import socket
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=2)
    print("proxy: connected")
except OSError as e:
    print("proxy: " + str(e.errno))
import os
print("env: " + os.environ.get("HTTPS_PROXY", "-"))`)
	if !strings.Contains(res.Stdout, "proxy: 13") || !strings.Contains(res.Stdout, "env: -") {
		t.Fatalf("without egress: %q (stderr %q, %+v)", res.Stdout, res.Stderr, res)
	}
	for _, l := range e.Layers() {
		if l.Name == LayerEgressProxy && (l.Active || !l.NotNeeded) {
			t.Errorf("egress row without a host list: %+v", l)
		}
	}
}

// After the call the listener is gone: a connection attempt to it from serve's side fails, and
// no accept goroutine is left behind.
func TestEgressCallCloses(t *testing.T) {
	var served atomic.Int64
	var ln net.Listener
	g := &egress{port: EgressPort, forCall: func(string, func(egressproxy.Decision)) (func(net.Conn), func()) {
		return func(net.Conn) { served.Add(1) }, func() {}
	}}
	c := g.call("s1")
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	ln, err = net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, _ := ln.(*net.TCPListener).File()
	ln.Close()
	addr := ln.Addr().String()
	if err := unix.Sendmsg(fds[1], []byte{1}, unix.UnixRights(int(lf.Fd())), nil, 0); err != nil {
		t.Fatal(err)
	}
	lf.Close()
	unix.Write(fds[1], []byte("sandbox setup failed: late"))
	unix.Close(fds[1])
	msg := c.report(os.NewFile(uintptr(fds[0]), "ctl"))
	if string(msg) != "sandbox setup failed: late" {
		t.Errorf("message after the listener: %q", msg)
	}
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatalf("the passed listener does not accept: %v", err)
	}
	conn.Close()
	deadline := time.Now().Add(2 * time.Second)
	for served.Load() != 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c.close()
	if conn, err := net.DialTimeout("tcp", addr, 2*time.Second); err == nil {
		conn.Close()
		t.Error("the listener still accepts after the call closed")
	}
	if served.Load() != 1 {
		t.Errorf("handler saw %d connections, want 1", served.Load())
	}
	// A helper that fails before it listens: its message is kept whole.
	fds2, _ := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	unix.Write(fds2[1], []byte("sandbox setup failed: early"))
	unix.Close(fds2[1])
	c2 := g.call("s2")
	if msg := c2.report(os.NewFile(uintptr(fds2[0]), "ctl")); string(msg) != "sandbox setup failed: early" {
		t.Errorf("message without a listener: %q", msg)
	}
	c2.close()
}

func countingListener(t *testing.T) (net.Listener, string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return ln, port, &n
}

// When serve is not root the helper's network namespace lives in a user namespace, where it
// needs CAP_NET_ADMIN passed in and dropped again: the plumbing test again, as uid 65534 (this
// test binary, copied where that uid can run it). Root only: it is root that can switch.
func TestEgressPlumbingUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestEgressPlumbing itself runs unprivileged here")
	}
	if os.Getenv("MCPSANDBOX_EGRESS_INNER") != "" {
		t.Skip("already the unprivileged run")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-egress-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o777)
	bin := filepath.Join(dir, "allowlist.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run", "^TestEgressPlumbing$", "-test.v", "-test.count", "1")
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=/usr/bin:/bin", "MCPSANDBOX_EGRESS_INNER=1"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	// No user namespaces for that uid: every namespace attempt fails at clone, and the probe ends
	// at "no network namespace". A failure of the egress set-up itself (lo, the listener) is not
	// that, and fails the test.
	if err != nil && strings.Contains(string(out), "a network namespace of their own") && !strings.Contains(string(out), "egress: ") {
		t.Skipf("no user namespaces for uid 65534 on this host, so a non-root serve refuses a host list here: %s", out)
	}
	if err != nil || !strings.Contains(string(out), "--- PASS: TestEgressPlumbing") {
		t.Fatalf("as uid 65534: %v\n%s", err, out)
	}
	t.Logf("as uid 65534:\n%s", out)
}

// A call whose program is refused a host gets the refusal in its result, with the rule and the
// fix, as an HTTPS client prints only "CONNECT tunnel failed, response 403" (trial35 F17); a call
// that reaches nothing gets no note. Red with mutant egress-denials-unsaid.
func TestEgressRefusalNamedInResult(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("seccomp filter not built for " + runtime.GOARCH)
	}
	pythonExec.hosts = []string{"pypi.org"}
	defer func() { pythonExec.hosts = nil }()
	e := egressExecutor(t, nil)
	res := runPython(t, e, `
import os, socket
host, port = os.environ["HTTPS_PROXY"].rsplit("/", 1)[1].split(":")
for target in ["example.com:443", "example.com:443", "a.test:443", "b.test:443", "c.test:443", "d.test:443"]:
    s = socket.create_connection((host, int(port)), timeout=5)
    s.sendall(("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n").encode())
    print(s.makefile().readline().strip())
`)
	if !strings.Contains(res.Stdout, "403") {
		t.Fatalf("the proxy did not refuse: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if len(res.EgressDenied) != 3 || res.EgressDeniedMore != 2 ||
		!strings.Contains(res.EgressDenied[0], "example.com:443") || !strings.Contains(res.EgressDenied[0], "allowlist.network") ||
		!strings.Contains(res.EgressDenied[0], `add "example.com"`) {
		t.Errorf("the result names the refusals as %q and %d more; want example.com's (once), a.test's, b.test's, and 2 more", res.EgressDenied, res.EgressDeniedMore)
	}
	if quiet := runPython(t, e, "print(1)"); len(quiet.EgressDenied) != 0 || quiet.EgressDeniedMore != 0 {
		t.Errorf("a call that reached nothing has refusals: %q", quiet.EgressDenied)
	}
}
