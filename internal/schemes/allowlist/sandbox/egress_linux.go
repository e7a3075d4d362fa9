package sandbox

// The allowlist scheme's egress path (network by name, issue 14).
//
// With a host list the command keeps an empty network namespace of its own, as with
// network = false: no interface but loopback, no route, no resolver. The one way out is serve's
// egress proxy, reached like this:
//
//  1. The helper, still inside the new network namespace and before Landlock and seccomp, brings
//     lo up (it holds CAP_NET_ADMIN over that namespace: as root, or through the user namespace
//     it was started in when serve is not root), creates a TCP listener on 127.0.0.1:EgressPort
//     and hands that listening socket to serve over the spec socket (SCM_RIGHTS), then closes
//     its own copy. It then execs the command, which inherits nothing of it.
//  2. serve accepts on the listener (a socket keeps the namespace it was created in, and accept
//     works on it from any namespace) and gives each connection to the proxy, for the duration
//     of the call only: the listener is closed when the call ends.
//
// The issue sketches a relay in the helper over an inherited unix socket; this is the same
// boundary without a relay process (the helper execs away, so it cannot relay): the only
// endpoint reachable from the sandbox is a socket whose other side is serve's proxy. Nothing
// else is listening in the namespace, and the command cannot add a listener or a route:
//   - Landlock (ABI >= 4) handles TCP bind and connect and allows only connect to EgressPort;
//   - seccomp lets socket() create AF_INET/AF_INET6 SOCK_STREAM (protocol 0 or TCP) sockets and
//     nothing else (no UDP, raw, packet or netlink; no AF_UNIX, as with network = false);
//   - the command has no capability over the namespace (uid drop or an unprivileged user
//     namespace, no_new_privs), so it cannot configure interfaces.
//
// Without a network namespace (a host where the helper cannot create one) the scheme refuses to
// serve a host list rather than give the command the host's network.

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	egressproxy "github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// EgressPort is where the proxy answers inside the sandbox's network namespace (127.0.0.1).
const EgressPort = helper.EgressPort

// The proxy connections one call holds open at once are bounded by limits.egress_connections;
// more wait in the listener's backlog until one ends (the call's own: no other call shares it).

// egress is the executor's side of the egress path; nil when the policy has no host list.
type egress struct {
	port  int
	hosts []string // what the policy lists, for Layers and the logs
	key   string   // the policy key that lists them (Options.NetworkKey), as refusals name it
	conns int      // limits.egress_connections: one call's connections at once
	// forCall makes one call's proxy: serve handles one sandbox connection until it ends, stop
	// ends what is left when the call ends. A proxy per call lets every decision carry the
	// call's session.
	forCall func(session string, denied func(egressproxy.Decision)) (serve func(net.Conn), stop func())

	mu              sync.Mutex
	audit           *audit.Log // serve's audit log (SetAudit); nil: decisions go to the logger only
	server, polHash string
	log             *slog.Logger
}

// proxyEnvKeys are the variables the sandbox's proxy settings live in: the ones HTTP clients
// read (curl, Python's urllib/requests/pip, Go, git), npm's own, and pip's own option.
var proxyEnvKeys = []string{"HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy",
	"NO_PROXY", "no_proxy", "npm_config_proxy", "npm_config_https_proxy", "PIP_PROXY"}

// withEnv replaces any proxy variable of env by the sandbox's own settings. NO_PROXY is empty:
// every host goes through the proxy (the sandbox could not reach it otherwise anyway).
func (g *egress) withEnv(env []string) []string {
	if g == nil {
		return env
	}
	env = slices.DeleteFunc(env, func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return slices.Contains(proxyEnvKeys, k)
	})
	url := "http://127.0.0.1:" + strconv.Itoa(g.port)
	for _, k := range proxyEnvKeys {
		v := url
		if strings.EqualFold(k, "NO_PROXY") {
			v = ""
		}
		env = append(env, k+"="+v)
	}
	return env
}

// egressReadFiles are what package managers read to describe the host (pip's User-Agent reads
// the distribution's release files and fails without them); harmless, and only with a host list.
// OpenSSL's configuration every call reads (openssl_linux.go).
var egressReadFiles = []string{"/etc/debian_version", "/etc/os-release", "/etc/lsb-release"}

// apply sets the helper's part of a call with egress: the port to listen on and the files above.
func (g *egress) apply(s *helper.Spec) {
	if g == nil {
		return
	}
	s.EgressPort = g.port
	s.ReadFiles = slices.Concat(s.ReadFiles, egressReadFiles)
}

// egressCall is one call's listener, served until close.
type egressCall struct {
	serve  func(net.Conn)
	stop   func()
	mu     sync.Mutex
	closed bool
	ln     net.Listener
	conns  map[net.Conn]struct{}
	max    int
	wg     sync.WaitGroup
	// the call's refusals, for its result (each named once, at most MaxEgressDenied; more counted)
	denied     []string
	deniedMore int
}

// deny records one of the call's refusals.
func (c *egressCall) deny(d egressproxy.Decision) {
	n := d.Note() // serve's own fields only: a host that is not plain quoted (atk35b F4, atk41 F17)
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case slices.Contains(c.denied, n): // a client's retry: named once
	case len(c.denied) < executor.MaxEgressDenied:
		c.denied = append(c.denied, n)
	default:
		c.deniedMore++
	}
}

// note puts the call's refusals in its result: an HTTPS client shows only "CONNECT tunnel failed,
// response 403", the rule and its fix being in the 403's body it never prints (trial35 F17).
func (c *egressCall) note(res *executor.Result) {
	if c == nil || res == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res.EgressDenied, res.EgressDeniedMore = slices.Clone(c.denied), c.deniedMore
}

// call starts one call's share of the egress path; nil (a no-op) without egress.
func (g *egress) call(session string) *egressCall {
	if g == nil {
		return nil
	}
	c := &egressCall{conns: map[net.Conn]struct{}{}, max: g.conns}
	c.serve, c.stop = g.forCall(session, c.deny)
	return c
}

// report reads what the helper writes on the spec socket after the spec: with egress, first the
// listener (a one-byte message carrying it), then, as always, nothing when the exec succeeds or
// the helper's failure message. A helper that fails before it listens writes the message alone;
// its first byte is kept.
func (c *egressCall) report(ctl *os.File) []byte {
	if c == nil {
		msg, _ := io.ReadAll(io.LimitReader(ctl, 4096))
		return msg
	}
	var first []byte
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, err := unix.Recvmsg(int(ctl.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	if err == nil && oobn > 0 {
		if fd, ferr := fdFrom(oob[:oobn]); ferr == nil {
			c.start(fd)
		} else {
			first = []byte("sandbox setup failed: egress listener: " + ferr.Error() + "; ")
		}
	} else if err == nil && n == 1 {
		first = buf[:1]
	}
	rest, _ := io.ReadAll(io.LimitReader(ctl, 4096))
	return append(first, rest...)
}

func fdFrom(oob []byte) (int, error) {
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil || len(msgs) != 1 {
		return -1, fmt.Errorf("no descriptor in the message (%v)", err)
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return -1, fmt.Errorf("expected one descriptor (%v)", err)
	}
	return fds[0], nil
}

// start serves the listener the helper made until close.
func (c *egressCall) start(fd int) {
	f := os.NewFile(uintptr(fd), "egress-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return // the sandbox's connections are refused: the listener's last reference is gone
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		ln.Close()
		return
	}
	c.ln = ln
	c.wg.Add(1)
	c.mu.Unlock()
	go c.accept(ln)
}

func (c *egressCall) accept(ln net.Listener) {
	defer c.wg.Done()
	slots := make(chan struct{}, max(c.max, 1))
	for {
		slots <- struct{}{}
		conn, err := ln.Accept()
		if err != nil {
			return
		}
		c.mu.Lock()
		if c.closed {
			c.mu.Unlock()
			conn.Close()
			return
		}
		c.conns[conn] = struct{}{}
		c.mu.Unlock()
		go func() {
			defer func() { <-slots }()
			c.serve(conn)
			conn.Close()
			c.mu.Lock()
			delete(c.conns, conn)
			c.mu.Unlock()
		}()
	}
}

// close ends the call's egress: the listener and every connection still open. Safe on nil and
// more than once.
func (c *egressCall) close() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.closed = true
	ln := c.ln
	conns := make([]net.Conn, 0, len(c.conns))
	for conn := range c.conns {
		conns = append(conns, conn)
	}
	c.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, conn := range conns {
		conn.Close()
	}
	c.wg.Wait() // the accept loop only; handlers end on their closed connections
	c.stop()
}

// procAttr: when serve is not root, the helper's network namespace belongs to a user namespace
// in which the helper keeps its own uid, and execve clears the capabilities of a non-zero uid;
// CAP_NET_ADMIN is passed as an ambient capability so the helper can bring lo up, and the
// helper drops every capability again (dropEgressCaps) before anything of the command runs.
// A root server's helper is root in the namespace and needs nothing.
func (g *egress) procAttr(a nsAttr, sp *syscall.SysProcAttr) {
	if g != nil && a.userNS {
		sp.AmbientCaps = append(sp.AmbientCaps, unix.CAP_NET_ADMIN)
	}
}

// errNoNetNS is why a host list (under key) cannot be served on a host without network namespaces.
func errNoNetNS(key string) error {
	return errors.New(key + " lists hosts, but this host cannot give commands a network namespace of their own, " +
		"so their only way out could not be serve's egress proxy; use network = false, or run serve where namespaces work " +
		"(as root, or with unprivileged user namespaces enabled: sysctl kernel.unprivileged_userns_clone=1)")
}

// netKey is the policy key of the host list: Options.NetworkKey, or allowlist's own.
func netKey(o Options) string {
	if o.NetworkKey == "" || mutated("wrap-egress-key-allowlist") {
		return "allowlist.network"
	}
	return o.NetworkKey
}

// egressOptions is how New builds the egress path (embedded in Options).
type egressOptions struct {
	// egressServe, set by this package's tests, stands in for the proxy.
	egressServe func(net.Conn)
}

// newEgress builds the executor's egress path from the policy's host list; nil without one.
func newEgress(p *policy.Policy, o Options) (*egress, error) {
	if o.egressServe != nil {
		return &egress{port: EgressPort, forCall: func(string, func(egressproxy.Decision)) (func(net.Conn), func()) { return o.egressServe, func() {} }}, nil
	}
	n := alsec.Of(p).Net()
	if n.Mode != policy.NetHosts {
		return nil, nil
	}
	rules := n.Hosts()
	g := &egress{port: EgressPort, key: netKey(o), server: p.Name, polHash: p.Hash(), log: o.Logger, conns: p.Limits.EgressConnections}
	if g.conns <= 0 {
		g.conns = policy.DefaultEgressConnections
	}
	if g.log == nil {
		g.log = slog.New(slog.DiscardHandler)
	}
	for _, r := range rules {
		g.hosts = append(g.hosts, r.String())
	}
	// one proxy per call: its bounds (connections, names below wildcard rules, decisions logged
	// one by one a second) are the call's own
	po := egressproxy.Options{Key: g.key, Logger: o.Logger, Scope: "call", MaxConns: g.conns}
	g.forCall = func(session string, denied func(egressproxy.Decision)) (func(net.Conn), func()) {
		o := po
		o.Audit = func(d egressproxy.Decision) { g.record(d, session) }
		o.Denied = denied
		px := egressproxy.New(rules, o)
		// Close waits for handlers, one of which may be mid-dial: off the call's path.
		return px.ServeConn, func() { go px.Close() }
	}
	return g, nil
}

// SetAudit makes egress decisions go to serve's audit log, each with its call's session (serve
// calls it once the log is open; the docker executor has the same method).
func (e *Executor) SetAudit(l *audit.Log) {
	if e.egress == nil {
		return
	}
	e.egress.mu.Lock()
	e.egress.audit = l
	e.egress.mu.Unlock()
}

// record writes one decision to the audit log (the proxy's logger has it already).
func (g *egress) record(d egressproxy.Decision, session string) {
	g.mu.Lock()
	l := g.audit
	g.mu.Unlock()
	if l == nil {
		return
	}
	if err := l.Append(d.Entry(g.server, session, g.polHash)); err != nil {
		g.log.Warn("could not write an egress decision to the audit log", "decision", d.String(), "err", err)
	}
}

// egressLayer is the egress row of Layers: which hosts the command can reach, and how.
func (e *Executor) egressLayer() executor.Layer {
	l := executor.Layer{Name: LayerEgressProxy}
	if e.egress == nil {
		l.NotNeeded = true
		l.Detail = "the policy lists no hosts (" + e.netKey + " is true or false): no proxy"
		return l
	}
	hosts := "the hosts the policy lists"
	if len(e.egress.hosts) > 0 {
		hosts = strings.Join(e.egress.hosts, ", ")
	}
	tcp := "Landlock allows TCP connect to that port only and no bind"
	if e.probe.LandlockABI < 4 {
		tcp = fmt.Sprintf("nothing else listens in the namespace (Landlock's TCP rules need ABI 4, this kernel has %d)", e.probe.LandlockABI)
	}
	l.Active = e.attr.has(unix.CLONE_NEWNET)
	l.Detail = fmt.Sprintf("reachable: %s (a host without :PORT on 80 and 443), only through serve's egress proxy (HTTP CONNECT and plain HTTP at 127.0.0.1:%d in the call's own "+
		"network namespace, which has no route and no resolver; serve resolves the names and checks each address); %s; "+
		"seccomp lets socket() make TCP sockets only (no UDP, raw or unix sockets)", hosts, e.egress.port, tcp)
	return l
}

// openWorld is the tool's OpenWorldHint: commands reach the outside world with network = true
// or a host list.
func (e *Executor) openWorld() *bool {
	v := e.al.AllHosts() || e.egress != nil
	return &v
}

// egressNetDetail is the network isolation row's detail under a host list.
func (e *Executor) egressNetDetail(d string) string {
	if e.egress == nil {
		return d
	}
	return "the policy lists hosts: commands have no network of their own (no route, no resolver, no UDP); " +
		"only the listed hosts are reachable, through serve's egress proxy (see " + LayerEgressProxy + ")"
}

// egressTCPNote completes the Landlock TCP row under a host list.
func (e *Executor) egressTCPNote() string {
	if e.egress == nil {
		return ""
	}
	return fmt.Sprintf(", except connect to the egress proxy's port %d", e.egress.port)
}

// egressSocketNote is the seccomp row's socket() part under a host list.
func (e *Executor) egressSocketNote(d string) string {
	if e.egress == nil {
		return d
	}
	return "; socket() makes TCP sockets only (no UDP, raw, packet, netlink or unix sockets)"
}

// egressNetNSNote is the network namespace row's detail under a host list: lo is up, and the
// only thing on it is the listener serve's proxy answers on.
func (e *Executor) egressNetNSNote(d string) string {
	if e.egress == nil {
		return d
	}
	return fmt.Sprintf("each call gets a new network namespace: no interface but loopback, no route; on loopback only 127.0.0.1:%d, answered by serve's egress proxy", e.egress.port)
}
