package sandbox

import (
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/procid"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Network by name (docker.network = ["pypi.org", ...]).
//
// Containers keep network "none": no interface but loopback, so no route, no DNS server and
// no host service is reachable, whatever the program does. Their one way out is serve's
// egress proxy, listening on a unix socket of the container's own, in a directory of serve's
// that is bind-mounted read-only into that container (and no other) at egressMount. The
// wrapper starts a relay there (a small Python process on 127.0.0.1:egressPort inside the
// container, forwarding each connection to the socket), and the container's environment
// names it as HTTP_PROXY / HTTPS_PROXY (and pip's and npm's own settings). The proxy checks
// every request against the list, resolves names itself and refuses metadata, loopback and
// private addresses (package internal/serve/egress).
//
// Why not an `internal` Docker network with the proxy on its gateway: a container on an
// internal network still reaches every host service bound to 0.0.0.0 through the gateway
// address (measured here: a container connected to a host port through 172.18.0.1), and
// Docker's embedded DNS server (127.0.0.11) forwards names for internal networks on engines
// before 26.0 (CVE-2024-29018). With network none neither path exists.
//
// Who may use the proxy. The sockets are 0666 (containers run as another uid: 65534 by
// default, or a remapped one), so the directories above them are what keeps other local users
// out. Layout:
//
//	BASE/                    0700, owned by serve's uid: $XDG_RUNTIME_DIR/mcpsandbox-egress,
//	                         else $TMPDIR/mcpsandbox-egress-UID (verified, never followed as a symlink)
//	  INSTANCE-RANDOM/       0700, one per executor (egressDirName: boot, pid namespace, pid and
//	                         start time, so a later serve can tell whether its serve is dead)
//	    CALLID/              0711, one per container, created with it, removed with it
//	      egress.sock        0666, that container's own proxy
//
// A bind mount's permissions inside the container are the mounted directory's and the
// socket's, not its host parents': the container's uid reaches /run/mcpsandbox-egress/egress.sock,
// while another local user cannot pass BASE (EACCES) whatever names it learns (the mount table,
// /proc/PID/mountinfo, shows them). A per-container secret the relay presents was the other
// option; it would have to live in the container, where any process of the program's uid reads
// it, and it leaves the proxy reachable (an audit-line writer) to anyone who can list /tmp.
// What a private directory cannot stop: a host process running as the containers' own uid can
// reach the socket through /proc/PID/root of a container process (the kernel's ptrace rule for
// the same uid), as it can reach everything else of that container; docker.user chooses that uid.
//
// One proxy per container, with its own bound (Options.EgressConns, default
// DefaultEgressConns): a program holding hundreds of connections gets 503 past its own bound
// and no other container notices. All containers together are bounded too (egressTotal: the
// executor's file descriptors and memory), shared fairly between them (egressShare): past it a
// container holding less than its share takes the place of a connection of the one holding
// the most, and one at or past its share is answered 503 the same way.
//
// Cleanup: a container's directory goes when the container is removed (destroy), the
// executor's directory at Close, and the directories of serves that are provably dead
// (SIGKILLed) at the next serve's start (sweepEgressDirs, beside the container reaper).
const (
	egressMount = "/run/mcpsandbox-egress" // in the container: the proxy socket's directory
	egressSock  = "egress.sock"
	egressPort  = 3128 // the relay on the container's loopback

	// DefaultEgressConns is a container's bound on egress connections at once (tunnels
	// included) when Options.EgressConns is 0; past it a new connection is answered 503.
	DefaultEgressConns = 32
	// egressTotalMin is the least bound on egress connections at once across all of an
	// executor's containers (at least 4 containers' worth: egressTotal).
	egressTotalMin = 256
)

// egressTotal is the bound across all containers for a per-container bound of quota, when at
// most sandboxes containers may live at once: at least one place each, so that every
// container's fair share (egressShare) is at least one connection.
func egressTotal(quota, sandboxes int) int { return max(egressTotalMin, 4*quota, sandboxes) }

// EgressTotal is the bound on egress connections across the containers of a serve of p (explain).
func EgressTotal(p *policy.Policy) int {
	quota := p.Limits.EgressConnections
	if quota <= 0 {
		quota = DefaultEgressConns
	}
	return egressTotal(quota, egressSandboxes(p))
}

// egressSandboxes is how many containers of p may live at once: calls running, idle session
// containers and the pool.
func egressSandboxes(p *policy.Policy) int {
	d := dksec.Of(p)
	n := p.Limits.MaxConcurrent + max(d.Pool, 0)
	if d.Sessions() {
		n += d.SessionCap()
	}
	return n
}

// egressEnv is what every container of a host-list policy gets besides the fixed variables.
func egressEnv() []string {
	u := "http://127.0.0.1:" + strconv.Itoa(egressPort)
	no := "localhost,127.0.0.1,::1"
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"NO_PROXY=" + no, "no_proxy=" + no,
		"PIP_PROXY=" + u, "npm_config_proxy=" + u, "npm_config_https_proxy=" + u,
	}
}

// egressBase is the private directory holding every executor's socket directories (see the
// layout above). XDG_RUNTIME_DIR only when it is serve's uid's own directory: a sudo that kept
// another user's would let that user swap the base under serve.
func egressBase() string {
	if d := xdg.Dir("XDG_RUNTIME_DIR"); d != "" && checkPrivateDir(d) == nil {
		return filepath.Join(d, "mcpsandbox-egress")
	}
	return filepath.Join(os.TempDir(), "mcpsandbox-egress-"+strconv.Itoa(os.Geteuid()))
}

// privateMode is the mode of BASE and of an executor's directory.
func privateMode() os.FileMode {
	if mutated("docker-egress-private-dir") {
		return 0o755
	}
	return 0o700
}

// egressDirName names an executor's directory: who made it (for sweepEgressDirs) and a random
// part (one process may run several executors).
func egressDirName(me instance) string {
	return fmt.Sprintf("%s-%s-%d-%d-%s", bootTag(me.Boot), pidnsTag(me.PIDNS), me.PID, me.Start, randHex(4))
}

func bootTag(b string) string {
	b = strings.ReplaceAll(b, "-", "")
	if len(b) > 12 {
		b = b[:12]
	}
	if b == "" {
		return "x"
	}
	return b
}

func pidnsTag(ns string) string { // "pid:[4026531836]" -> "4026531836"
	ns = strings.TrimSuffix(strings.TrimPrefix(ns, "pid:["), "]")
	if ns == "" || strings.ContainsAny(ns, "-/") {
		return "x"
	}
	return ns
}

// egressDirOwner is the instance an executor's directory name describes, as far as judge
// needs it (this machine's host and machine id); false for a name egressDirName did not make.
func egressDirOwner(me instance, name string) (instance, bool) {
	f := strings.Split(name, "-")
	if len(f) != 5 || len(f[4]) != 8 {
		return instance{}, false
	}
	pid, err1 := strconv.Atoi(f[2])
	start, err2 := strconv.ParseUint(f[3], 10, 64)
	if err1 != nil || err2 != nil || pid <= 0 {
		return instance{}, false
	}
	o := instance{procid.Instance{Host: me.Host, Machine: me.Machine, Boot: "another boot", PIDNS: "another namespace", PID: pid, Start: start}}
	if f[0] == "x" || f[1] == "x" {
		o.Boot = "" // judge: unknown
	}
	if f[0] == bootTag(me.Boot) {
		o.Boot = me.Boot
	}
	if f[1] == pidnsTag(me.PIDNS) {
		o.PIDNS = me.PIDNS
	}
	return o, true
}

// sweepEgressDirs removes the socket directories of executors whose serve is provably dead
// (judge), and only those; it returns how many it removed.
func (e *Executor) sweepEgressDirs() int {
	base := egressBase()
	if runtime.GOOS != "linux" || checkPrivateDir(base) != nil {
		return 0 // none made here, or not ours to touch
	}
	ents, err := os.ReadDir(base)
	if err != nil {
		return 0
	}
	n := 0
	for _, d := range ents {
		o, ok := egressDirOwner(e.me, d.Name())
		if !ok || !d.IsDir() || e.me.judgeLocal(o) != dead {
			continue
		}
		if err := os.RemoveAll(filepath.Join(base, d.Name())); err != nil {
			e.log.Warn("could not remove the egress socket directory of a serve that is no longer running", "dir", filepath.Join(base, d.Name()), "err", err)
			continue
		}
		n++
	}
	return n
}

// egressState is the executor's egress for a host-list policy: its directory, the proxy
// options every container's proxy shares, the bound across containers and the audit.
type egressState struct {
	dir string // this executor's directory in egressBase
	// fallback is the private base made because egressBase was another user's ("" = none):
	// removed at close
	fallback string
	hosts    []policy.HostRule
	popts    egress.Options // each container's proxy (MaxConns: the per-container bound)
	quota    int
	share    *egressShare // the bound across containers

	warn func(msg string, args ...any)

	bmu    sync.Mutex
	boxes  map[*boxEgress]bool
	closed bool

	draining chan struct{} // refusals past the total bound still reading their request
	lastFull atomic.Int64  // unix ns of the last warning of a refusal past the total bound

	mu       sync.Mutex
	log      *audit.Log
	ownLog   bool
	logErr   error
	server   string
	polHash  string
	polAudit string
}

// boxEgress is one container's proxy: its directory (mounted at egressMount), socket and
// connections.
type boxEgress struct {
	s       *egressState
	dir     string
	name    string // the container's name, for the decisions' client field
	l       *net.UnixListener
	proxy   *egress.Proxy
	session atomic.Pointer[string]
	call    atomic.Pointer[string] // the call the container runs now ("" between a session's calls)
	// shared says the container serves a session's calls in turn (markShared): a process one
	// call left may connect during another, so a connection names the call that ran then as
	// during_call, never as its call (atk39b F9).
	shared atomic.Bool
	conns  atomic.Int64 // connections accepted, refused ones included (tests)
	wg     sync.WaitGroup
	done   chan struct{}
	once   sync.Once

	// the refusals taken while a call runs (beginNotes..endNotes), for its result: each named
	// once, at most executor.MaxEgressDenied, the rest counted
	nmu        sync.Mutex
	noting     bool
	denied     []string
	deniedMore int
}

// beginNotes starts gathering the refusals of the call the container runs now.
func (b *boxEgress) beginNotes() {
	if b == nil {
		return
	}
	b.nmu.Lock()
	defer b.nmu.Unlock()
	b.noting, b.denied, b.deniedMore = true, nil, 0
}

// endNotes ends the call's gathering and puts its refusals in its result: pip and requests
// print only "Tunnel connection failed: 403 Forbidden", the rule and its fix being in the 403's
// body they never print, and serve's log and audit are not what the model sees (trial40 F6; as
// the allowlist scheme's, trial35 F17). Refusals between a session's calls (a process an earlier
// call left) are audited only.
func (b *boxEgress) endNotes(res *executor.Result) {
	if b == nil {
		return
	}
	b.nmu.Lock()
	defer b.nmu.Unlock()
	if res != nil && !mutated("docker-egress-refusals-in-result") {
		res.EgressDenied, res.EgressDeniedMore = slices.Clone(b.denied), b.deniedMore
	}
	b.noting, b.denied, b.deniedMore = false, nil, 0
}

// deny gathers one refusal of the proxy (egress.Options.Denied), told before the program
// learns of it, so a call that ends on its 403 finds it named.
func (b *boxEgress) deny(d egress.Decision) {
	n := d.Note() // serve's own fields only: a host that is not plain quoted (atk35b F4, atk41 F17)
	b.nmu.Lock()
	defer b.nmu.Unlock()
	switch {
	case !b.noting:
	case slices.Contains(b.denied, n): // a client's retry: named once
	case len(b.denied) < executor.MaxEgressDenied:
		b.denied = append(b.denied, n)
	default:
		b.deniedMore++
	}
}

// startEgress prepares the egress of a host-list policy; nil, nil when the policy has none.
// Each container's socket and proxy are made with the container (open).
func (e *Executor) startEgress() (*egressState, error) {
	n := dksec.Of(e.pol).Net()
	if n.Mode != policy.NetHosts {
		return nil, nil
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("docker.network host lists need serve and the engine on one Linux machine (the proxy's unix socket is mounted into containers); on %s use docker.network = \"none\", or run serve inside the Linux VM that runs the engine", runtime.GOOS)
	}
	if !strings.HasPrefix(e.eng.Host, "unix://") {
		return nil, fmt.Errorf("docker.network host lists need the engine on this machine (a unix socket), not %s: the proxy's socket is mounted into containers; use docker.network = \"none\" with a remote engine", e.eng.Where())
	}
	base, fallback := egressBase(), ""
	if err := ensurePrivateDir(base, privateMode()); err != nil {
		// Another local user may have made the usual place first (to reach serve's sockets, or
		// only to stop serve starting): serve then uses a private directory of its own, with a
		// random name, and removes it at the end. Only dead serves' directories in the usual
		// place are swept.
		fb, ferr := os.MkdirTemp("", "mcpsandbox-egress-"+strconv.Itoa(os.Geteuid())+"-")
		if ferr != nil {
			return nil, fmt.Errorf("docker.network: the egress proxy's socket directory: %w; and a private one could not be made either: %w", err, ferr)
		}
		if cerr := os.Chmod(fb, privateMode()); cerr != nil {
			os.RemoveAll(fb)
			return nil, fmt.Errorf("docker.network: %w", cerr)
		}
		e.log.Warn("the egress proxy's usual socket directory is not serve's own: using a private one instead", "usual", base, "problem", err, "using", fb)
		base, fallback = fb, fb
	}
	dir := filepath.Join(base, egressDirName(e.me))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("docker.network: create the egress proxy's socket directory: %w", err)
	}
	if err := os.Chmod(dir, privateMode()); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: %w", err)
	}
	quota := e.opts.EgressConns
	if quota <= 0 {
		quota = e.pol.Limits.EgressConnections // limits.egress_connections
	}
	if quota <= 0 {
		quota = DefaultEgressConns
	}
	s := &egressState{dir: dir, fallback: fallback, hosts: n.Hosts(), quota: quota, share: newEgressShare(egressTotal(quota, egressSandboxes(e.pol)), quota),
		boxes: map[*boxEgress]bool{}, draining: make(chan struct{}, 64), log: e.opts.Audit,
		server: e.pol.Name, polHash: e.pol.Hash(), polAudit: e.pol.Audit.Path, warn: e.log.Warn}
	s.popts = egress.Options{
		Key: "docker.network", Resolver: e.opts.EgressResolver, TestOnlyAllowLoopback: e.opts.TestOnlyEgressAllowLoopback,
		Logger: e.log, MaxConns: quota, Scope: "container",
	}
	if mutated("docker-egress-quota") {
		s.popts.MaxConns = s.share.max // one pool for all containers
	}
	e.log.Info("egress proxy serving docker.network", "hosts", n.String(), "dir", dir,
		"connections_per_container", quota, "connections_total", s.share.max)
	return s, nil
}

// open makes a container's socket directory, socket and proxy; the container is name.
func (s *egressState) open(id, name string) (*boxEgress, error) {
	s.bmu.Lock()
	defer s.bmu.Unlock()
	if s.closed {
		return nil, errors.New("serve is shutting down")
	}
	dir := filepath.Join(s.dir, id)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("docker.network: create the container's egress socket directory: %w", err)
	}
	// the container runs as another uid: it may pass through the directory and connect to the
	// socket, not list the directory or create anything in it (it is mounted read-only too)
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: %w", err)
	}
	l, err := listenUnixIn(dir, egressSock)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: listen for the container's egress proxy: %w", err)
	}
	if err := os.Chmod(filepath.Join(dir, egressSock), 0o666); err != nil {
		l.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: %w", err)
	}
	b := &boxEgress{s: s, dir: dir, name: name, l: l, done: make(chan struct{})}
	o := s.popts
	o.Audit = func(d egress.Decision) { s.record(d, b.sessionID()) }
	o.Denied = b.deny
	b.proxy = egress.New(s.hosts, o)
	s.boxes[b] = true
	go b.serve()
	return b, nil
}

// setSession names the session whose call the container serves, for the audit (a pooled
// container's is known only when a call takes it).
func (b *boxEgress) setSession(id string) {
	if b != nil {
		b.session.Store(&id)
	}
}

// setCall names the call the container runs now, for the audit ("" when none: a session's
// container between calls).
func (b *boxEgress) setCall(id string) {
	if b != nil {
		b.call.Store(&id)
	}
}

// markShared says the container serves a session's calls: its background processes outlive
// the call that started them.
func (b *boxEgress) markShared() {
	if b != nil && !mutated("docker-egress-during-call") {
		b.shared.Store(true)
	}
}

func (b *boxEgress) callID() string {
	if p := b.call.Load(); p != nil {
		return *p
	}
	return ""
}

func (b *boxEgress) sessionID() string {
	if p := b.session.Load(); p != nil {
		return *p
	}
	return ""
}

// sandboxConn is a connection from a container, named after it (the decisions' client).
type sandboxConn struct {
	*net.UnixConn // keeps CloseWrite: the proxy half-closes tunnels
	addr          net.Addr
	head          headWatch // for the bound across containers: evict headless ones first
	call          string    // the call the container ran when it connected (atk39 F5)
	during        string    // the same, in a session's container: not known to be the connecting call's
}

// CallID is the call the connection was made in, for its decision (egress.Decision.Call).
func (c *sandboxConn) CallID() string { return c.call }

// DuringCallID is the call a session's container ran when the connection was made: the
// connecting process may be one an earlier call left (egress.Decision.DuringCall).
func (c *sandboxConn) DuringCallID() string { return c.during }

func (c *sandboxConn) Read(p []byte) (int, error) {
	n, err := c.UnixConn.Read(p)
	if n > 0 && !c.head.in() {
		c.head.see(p[:n])
	}
	return n, err
}

func (c *sandboxConn) RemoteAddr() net.Addr { return c.addr }

type containerAddr string

func (a containerAddr) Network() string { return "container" }
func (a containerAddr) String() string  { return string(a) }

// serve accepts the container's connections until close: each takes a place in the bound
// across containers (perhaps another container's: egressShare; or is answered 503), then the
// container's proxy, which answers 503 past the container's own bound.
func (b *boxEgress) serve() {
	defer close(b.done)
	addr := containerAddr(b.name)
	for {
		c, err := b.l.AcceptUnix()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(50 * time.Millisecond) // out of file descriptors: the connection waits in the backlog
			continue
		}
		b.conns.Add(1)
		sc := &sandboxConn{UnixConn: c, addr: addr, call: b.callID()}
		if b.shared.Load() {
			sc.call, sc.during = "", sc.call
		}
		a := b.s.share.admit(b, sc, sc.head.in)
		if a.victim != nil {
			b.s.evicted(a.victim, b)
		}
		if a.e == nil {
			b.s.refuseFull(sc, b, a)
			continue
		}
		b.wg.Add(1)
		go func() {
			defer b.wg.Done()
			defer b.s.share.release(a.e)
			b.proxy.ServeConn(sc)
		}()
	}
}

// refuseFull answers a connection past the bound across containers with 503, as the proxy
// answers one past a container's bound, and audits it as the proxy does its own (Record).
//
// The request is read (a little, briefly) before the connection is closed: a unix socket
// closed with unread bytes resets its peer, and the relay then drops the answer it had not
// yet passed on, leaving the program a bare closed connection instead of the 503.
func (s *egressState) refuseFull(c *sandboxConn, b *boxEgress, a admission) {
	why := fmt.Sprintf("too many egress connections at once from all sandboxes (%d; shared between them: this sandbox holds %d, its share now %d): retry later", s.share.max, a.mine, a.share)
	body := "mcpsandbox: egress to ? failed: " + why + "\n"
	c.SetWriteDeadline(time.Now().Add(100 * time.Millisecond))
	fmt.Fprintf(c, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\nX-Mcpsandbox-Egress: denied\r\n\r\n%s", len(body), body)
	c.CloseWrite()
	select {
	case s.draining <- struct{}{}:
		go func() {
			defer func() { <-s.draining }()
			c.SetReadDeadline(time.Now().Add(time.Second))
			io.Copy(io.Discard, io.LimitReader(c, 64<<10))
			c.Close()
		}()
	default:
		c.Close() // many refusals at once: no more time for each
	}
	// audited through the container's proxy, under its log rate: past the rate they are
	// counted into its summaries (they were once only mentioned in the next refusal's text,
	// which the audit's counts never saw, and the last second's not at all)
	if !mutated("docker-egress-full-audit") {
		b.proxy.Record(egress.Decision{Time: time.Now(), Client: b.name, Call: c.call, DuringCall: c.during, Method: "?", Rule: egress.RuleLimit, Reason: why})
	}
	now := time.Now().UnixNano()
	if last := s.lastFull.Load(); now-last >= int64(time.Second) && s.lastFull.CompareAndSwap(last, now) {
		s.warn("egress connection refused: the bound across containers is reached", "container", b.name, "bound", s.share.max)
	}
}

// evicted audits a connection closed to give its place to a connection of to, a container
// holding less than its share of the bound across containers.
func (s *egressState) evicted(v *shareConn, to *boxEgress) {
	why := fmt.Sprintf("closed: the egress connections of all sandboxes (%d) are shared, and this sandbox held the most when another (%s) needed its share", s.share.max, to.name)
	if v.box.proxy != nil {
		v.box.proxy.Record(egress.Decision{Time: time.Now(), Client: v.box.name, Method: "?", Rule: egress.RuleLimit, Reason: why})
	}
	now := time.Now().UnixNano()
	if last := s.lastFull.Load(); now-last >= int64(time.Second) && s.lastFull.CompareAndSwap(last, now) {
		s.warn("egress connection closed to share the bound across containers", "closed_from", v.box.name, "for", to.name, "bound", s.share.max)
	}
}

// close ends the container's proxy and its connections and removes its directory.
func (b *boxEgress) close() {
	if b == nil {
		return
	}
	b.once.Do(func() {
		b.l.Close()
		<-b.done
		b.proxy.Close()
		b.wg.Wait()
		if err := os.RemoveAll(b.dir); err != nil {
			b.s.warn("could not remove a container's egress socket directory", "dir", b.dir, "err", err)
		}
		b.s.bmu.Lock()
		delete(b.s.boxes, b)
		b.s.bmu.Unlock()
	})
}

// SetAudit makes egress decisions go to serve's audit log (the one serve writes calls to).
// Without it, the executor opens the policy's audit log itself at the first decision.
func (e *Executor) SetAudit(l *audit.Log) {
	if e.egress == nil || l == nil {
		return
	}
	e.egress.mu.Lock()
	defer e.egress.mu.Unlock()
	if e.egress.ownLog && e.egress.log != nil {
		e.egress.log.Close()
	}
	e.egress.log, e.egress.ownLog = l, false
}

// record writes one decision to the audit log, with the session of the call the container
// serves ("" before a call took it).
func (s *egressState) record(d egress.Decision, session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log == nil && s.logErr == nil {
		path := s.polAudit
		if path == "" {
			path, s.logErr = audit.DefaultPath()
		}
		if s.logErr == nil {
			s.log, s.logErr = audit.Open(path, os.Environ())
			s.ownLog = s.logErr == nil
		}
		if s.logErr != nil {
			s.warn("egress decisions will not reach the audit log (they are still logged here)", "err", s.logErr)
		}
	}
	if s.log == nil {
		return // the logger has the decision; the error was logged once below
	}
	if err := s.log.Append(d.Entry(s.server, session, s.polHash)); err != nil {
		s.warn("could not write an egress decision to the audit log", "decision", d.String(), "err", err)
	}
}

// close ends every container's proxy and its tunnels and removes the executor's directory.
func (s *egressState) close() {
	if s == nil {
		return
	}
	s.bmu.Lock()
	s.closed = true
	var bs []*boxEgress
	for b := range s.boxes {
		bs = append(bs, b)
	}
	s.bmu.Unlock()
	for _, b := range bs {
		b.close()
	}
	os.RemoveAll(s.dir)
	if s.fallback != "" {
		os.RemoveAll(s.fallback)
	}
	s.mu.Lock()
	if s.ownLog && s.log != nil {
		s.log.Close()
	}
	s.log = nil
	s.logErr = fmt.Errorf("closed")
	s.mu.Unlock()
}

// hostsText lists the reachable hosts as the policy writes them.
func hostsText(rs []policy.HostRule) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.String())
	}
	return strings.Join(out, ", ")
}
