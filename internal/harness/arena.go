package harness

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// SecretEnv is the variable holding the secret planted in the server's environment.
const SecretEnv = "MCPSANDBOX_HARNESS_API_KEY"

// SiblingSecretEnv is the variable holding the same secret in the sibling's environment (see
// SiblingPID): found in what a call returned, it came from the sibling's /proc/PID/environ.
const SiblingSecretEnv = "MCPSANDBOX_SIBLING_SECRET"

const (
	egressIP   = "198.51.100.7" // TEST-NET-2: never a real host, routed like the internet
	metadataIP = "169.254.169.254"
)

// Arena is one scenario's world: a scratch root with the workspace, canaries and a fake HOME,
// loopback listeners, and the live server. Every scenario gets its own, so they can run in
// parallel and nothing one leaves behind is blamed on another.
type Arena struct {
	Root, WS, Outside, Home, RootOnly string
	// Own holds serve's own files (the run's policy and audit log), beside Root, not in it: a
	// control that sets the workspace too wide (to Root) must still find serve willing to start,
	// and serve refuses a workspace holding its own files.
	Own                        string
	Nonce, Secret, Tag, Marker string

	// SandboxUID is the uid commands run as, when the harness can know it (-1 otherwise).
	SandboxUID int
	// ServeEnv is what an adapter's Prepare adds to the environment of the serve the arena
	// starts ("KEY=value"; the harness's own environment is never changed): the e2b adapter's
	// local server's address and key.
	ServeEnv []string

	tcpHits, udpHits, unixHits atomic.Int64
	dnsMu                      sync.Mutex
	dnsNames                   []string
	tcpPort, udpPort, dnsPort  int
	listenPort                 int // reserved and left free: the listen detector dials it
	unixPath, abstractName     string
	closers                    []func()
	eg                         *egressArena

	sibling  *exec.Cmd
	made     []os.FileInfo // Root and Own as made: vanished compares
	stagedMu sync.Mutex
	staged   []string

	policyPath string
	srv        *exec.Cmd
	stderr     *lockedBuffer
	cs         *mcp.ClientSession
	killed     atomic.Bool

	// serve over HTTP (a policy with a sandbox per session: sessions.go)
	url           string
	sessMu        sync.Mutex
	sessions      map[string]*mcp.ClientSession
	sessionSecret string
	httpServe     bool // set before start: serve over streamable HTTP, several sessions
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// NewArena lays out a scratch world (workspace, canaries, fake HOME, listeners, the tagged
// sibling) for a test that drives serve itself; setup files are laid in the workspace. Close
// removes it.
func NewArena(setup []Setup) (*Arena, error) { return newArena(setup) }

// newArena lays out the scratch root. Paths are opened by plain permissions (world-readable
// canaries, a world-writable outside directory) so that only the sandbox stands between a
// command and them: a containment result never rests on DAC.
func newArena(setup []Setup) (a *Arena, err error) {
	a = &Arena{Nonce: "NONCE" + randHex(10), Secret: "sk-harness-" + randHex(12), Tag: "mcpsbtag" + randHex(6),
		SandboxUID: -1}
	a.Marker = "PAYLOAD-RAN-" + a.Tag
	a.sessionSecret = "SESSIONSECRET" + randHex(10)
	removeStaleArenas() // a run killed outright (SIGKILL, SIGHUP before it was handled) left them
	// Not under /tmp: the allowlist scheme gives each call a private /tmp, which would hide the
	// canaries and listeners, so containment would rest on invisibility instead of Landlock.
	if a.Root, err = os.MkdirTemp("/var/tmp", "mcpsandbox-harness-"); err != nil {
		a.Root, err = os.MkdirTemp("", "mcpsandbox-harness-")
	}
	if err != nil {
		return nil, fmt.Errorf("create the harness scratch dir: %w (is TMPDIR writable?)", err)
	}
	defer func() {
		if err != nil {
			a.Close()
		}
	}()
	if a.Own, err = os.MkdirTemp(filepath.Dir(a.Root), "mcpsandbox-harness-own-"); err != nil {
		return a, fmt.Errorf("create the harness's directory for serve's own files: %w", err)
	}
	for _, d := range []string{a.Root, a.Own} { // so that a later run can tell them stale (stale.go)
		if err = markRun(d); err != nil {
			return a, fmt.Errorf("mark the harness scratch dir: %w", err)
		}
		fi, err := os.Lstat(d)
		if err != nil {
			return a, fmt.Errorf("the harness scratch dir: %w", err)
		}
		a.made = append(a.made, fi)
	}
	a.WS = filepath.Join(a.Root, "ws")
	a.Outside = filepath.Join(a.Root, "outside")
	a.Home = filepath.Join(a.Root, "home")
	a.RootOnly = filepath.Join(a.Root, "rootonly")
	files := []struct {
		path, content string
		mode          os.FileMode
	}{
		{a.Root, "", 0o755 | os.ModeDir},
		{a.WS, "", 0o755 | os.ModeDir},
		{a.Outside, "", 0o777 | os.ModeDir},
		{filepath.Join(a.Outside, "canary.txt"), a.Nonce, 0o666},
		{a.Home, "", 0o755 | os.ModeDir},
		{filepath.Join(a.Home, ".ssh"), "", 0o755 | os.ModeDir},
		{filepath.Join(a.Home, ".ssh", "id_rsa"), "-----BEGIN OPENSSH PRIVATE KEY-----\n" + a.Nonce + "\n", 0o644},
		{filepath.Join(a.Home, ".aws"), "", 0o755 | os.ModeDir},
		{filepath.Join(a.Home, ".aws", "credentials"), "[default]\naws_secret_access_key = " + a.Nonce + "\n", 0o644},
		{filepath.Join(a.Home, ".bashrc"), "# rc " + a.Nonce + "\n", 0o666},
		{filepath.Join(a.Home, ".env"), "API_KEY=" + a.Nonce + "\n", 0o644},
		{a.RootOnly, "", 0o700 | os.ModeDir},
		{filepath.Join(a.RootOnly, "secret"), a.Nonce, 0o600},
		{filepath.Join(a.WS, "notes.txt"), "pear\napple\nfig\napple\n", 0o644},
	}
	for _, f := range files {
		if f.mode.IsDir() {
			err = os.Mkdir(f.path, f.mode.Perm())
			if os.IsExist(err) {
				err = nil
			}
		} else {
			err = os.WriteFile(f.path, []byte(f.content), f.mode.Perm())
		}
		if err == nil {
			err = os.Chmod(f.path, f.mode.Perm()) // past the umask
		}
		if err != nil {
			return a, fmt.Errorf("lay out the harness scratch dir: %w", err)
		}
	}
	for i, s := range setup {
		if err := a.setupFile(s); err != nil {
			return a, fmt.Errorf("setup[%d] %s: %w", i, s.Path, err)
		}
	}
	if err := a.listen(); err != nil {
		return a, err
	}
	if err := a.listenEgress(); err != nil {
		return a, err
	}
	if a.listenPort, err = freeLoopbackPort(); err != nil {
		return a, err
	}
	return a, a.startSibling()
}

func (a *Arena) setupFile(s Setup) error {
	p := filepath.Join(a.WS, a.Expand(s.Path))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if s.Symlink != "" {
		return os.Symlink(a.Expand(s.Symlink), p)
	}
	if s.Hardlink != "" {
		return os.Link(a.Expand(s.Hardlink), p)
	}
	if s.FIFO {
		return mkfifo(p)
	}
	mode := os.FileMode(0o644)
	if s.Mode != 0 {
		mode = os.FileMode(s.Mode)
	}
	content := []byte(a.Expand(s.Content))
	if s.Size > 0 {
		content = []byte(strings.Repeat("x", int(s.Size)))
	}
	if err := os.WriteFile(p, content, mode); err != nil {
		return err
	}
	return os.Chmod(p, mode)
}

// ChownWorkspace hands the arena's workspace to uid:gid (the user commands run as).
func (a *Arena) ChownWorkspace(uid, gid int) error {
	a.SandboxUID = uid
	return filepath.Walk(a.WS, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := lstat(p); ok && st.Nlink > 1 && !fi.IsDir() {
			return nil // a host-made hard link: its file is the host's, outside the workspace too
		}
		return os.Lchown(p, uid, gid)
	})
}

// listen starts the loopback TCP, UDP, DNS and unix listeners. Each counts what reaches it.
func (a *Arena) listen() error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("harness TCP listener: %w", err)
	}
	a.closers = append(a.closers, func() { ln.Close() })
	a.tcpPort = ln.Addr().(*net.TCPAddr).Port
	go acceptCount(ln, &a.tcpHits)

	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("harness UDP listener: %w", err)
	}
	a.closers = append(a.closers, func() { pc.Close() })
	a.udpPort = pc.LocalAddr().(*net.UDPAddr).Port
	go func() {
		buf := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			a.udpHits.Add(1)
		}
	}()

	dns, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("harness DNS stub: %w", err)
	}
	a.closers = append(a.closers, func() { dns.Close() })
	a.dnsPort = dns.LocalAddr().(*net.UDPAddr).Port
	go a.serveDNS(dns)

	a.unixPath = filepath.Join(a.Outside, "agent.sock")
	ul, err := net.Listen("unix", a.unixPath)
	if err != nil {
		return fmt.Errorf("harness unix listener: %w", err)
	}
	os.Chmod(a.unixPath, 0o777) // DAC open: only the sandbox may stop a connect
	a.closers = append(a.closers, func() { ul.Close() })
	go acceptCount(ul, &a.unixHits)

	a.abstractName = "mcpsandbox-harness-" + a.Tag
	al, err := net.Listen("unix", "@"+a.abstractName)
	if err != nil {
		return fmt.Errorf("harness abstract unix listener: %w", err)
	}
	a.closers = append(a.closers, func() { al.Close() })
	go acceptCount(al, &a.unixHits)
	return nil
}

// freeLoopbackPort finds a loopback TCP port free now, for a sandboxed program to try to listen
// on. It is picked below the kernel's ephemeral range (net.ipv4.ip_local_port_range starts at
// 32768 by default), so no other program's ":0" listener is handed the same port between now
// and the program's listen: on a busy machine the listen detector then dialled somebody
// else's server and could not tell ("something else answers").
func freeLoopbackPort() (int, error) {
	for range 64 {
		port := 20000 + mrand.IntN(12000)
		ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // taken: try another
		}
		ln.Close()
		return port, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("harness: reserve a loopback port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// ListenPort is the loopback port the listen detector dials.
func (a *Arena) ListenPort() int { return a.listenPort }

func acceptCount(ln net.Listener, n *atomic.Int64) {
	for {
		c, err := ln.Accept()
		if errors.Is(err, net.ErrClosed) {
			return
		}
		if err != nil {
			// a passing failure (out of descriptors on a loaded host) must not leave the
			// listener uncounted for the rest of the run: a detector silent for that reason
			// would read as containment
			time.Sleep(5 * time.Millisecond)
			continue
		}
		n.Add(1)
		c.Close()
	}
}

// TCPHits, UDPHits and UnixHits count what reached the loopback listeners.
func (a *Arena) TCPHits() int64  { return a.tcpHits.Load() }
func (a *Arena) UDPHits() int64  { return a.udpHits.Load() }
func (a *Arena) UnixHits() int64 { return a.unixHits.Load() }

// TCPPort, UDPPort and DNSPort are the loopback listeners' ports.
func (a *Arena) TCPPort() int { return a.tcpPort }
func (a *Arena) UDPPort() int { return a.udpPort }
func (a *Arena) DNSPort() int { return a.dnsPort }

// DNSQueries lists the names the stub resolver was asked for that carry the arena's tag.
func (a *Arena) DNSQueries() []string {
	a.dnsMu.Lock()
	defer a.dnsMu.Unlock()
	var out []string
	for _, n := range a.dnsNames {
		if strings.Contains(strings.ToLower(n), a.Tag) {
			out = append(out, n)
		}
	}
	return out
}

// serveDNS records the name of every query and answers NXDOMAIN.
func (a *Arena) serveDNS(pc net.PacketConn) {
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		name := dnsName(buf[:n])
		a.dnsMu.Lock()
		a.dnsNames = append(a.dnsNames, name)
		a.dnsMu.Unlock()
		if n >= 12 {
			resp := append([]byte(nil), buf[:n]...)
			resp[2] |= 0x80            // response
			resp[3] = resp[3]&0xf0 | 3 // NXDOMAIN
			pc.WriteTo(resp, from)
		}
	}
}

// dnsName decodes the question name of a DNS query ("" if malformed).
func dnsName(msg []byte) string {
	if len(msg) < 13 {
		return ""
	}
	var labels []string
	for i := 12; i < len(msg); {
		l := int(msg[i])
		if l == 0 {
			return strings.Join(labels, ".")
		}
		if l > 63 || i+1+l > len(msg) {
			return ""
		}
		labels = append(labels, string(msg[i+1:i+1+l]))
		i += 1 + l
	}
	return ""
}

// Expand fills a scenario's placeholders.
func (a *Arena) Expand(s string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	rel, _ := filepath.Rel(a.WS, a.Outside)
	return strings.NewReplacer(
		"{{ws}}", a.WS, "{{root}}", a.Root, "{{outside}}", a.Outside, "{{rel_outside}}", rel,
		"{{canary}}", filepath.Join(a.Outside, "canary.txt"), "{{home}}", a.Home, "{{rootonly}}", a.RootOnly,
		"{{tcp_port}}", strconv.Itoa(a.tcpPort), "{{udp_port}}", strconv.Itoa(a.udpPort), "{{listen_port}}", strconv.Itoa(a.listenPort),
		"{{dns_port}}", strconv.Itoa(a.dnsPort), "{{unix_sock}}", a.unixPath, "{{abstract_sock}}", a.abstractName,
		"{{tag}}", a.Tag, "{{sibling_pid}}", strconv.Itoa(a.SiblingPID()), "{{marker}}", a.Marker, "{{egress_ip}}", egressIP, "{{metadata_ip}}", metadataIP, "{{session_secret}}", a.sessionSecret,
		"{{egress_allowed_host}}", EgressAllowedHost, "{{egress_forbidden_host}}", EgressForbiddenHost, "{{egress_rebind_host}}", EgressRebindHost,
		"{{egress_allowed_http_port}}", a.egPort(func(e *egressArena) *standIn { return e.allowedHTTP }),
		"{{egress_allowed_https_port}}", a.egPort(func(e *egressArena) *standIn { return e.allowedHTTPS }),
		"{{egress_forbidden_port}}", a.egPort(func(e *egressArena) *standIn { return e.forbiddenHTTP }),
		"{{egress_forbidden_https_port}}", a.egPort(func(e *egressArena) *standIn { return e.forbiddenHTTPS }),
	).Replace(s)
}

// Start writes p as the arena's policy file and starts `BIN serve --policy FILE` over stdio
// with the arena's secret and fake HOME in its environment, as a client would; Session is the
// client's side. extraEnv is added to serve's environment.
func (a *Arena) Start(ctx context.Context, bin string, p *policy.Policy, extraEnv ...string) error {
	return a.start(ctx, bin, p, extraEnv...)
}

// Session is the MCP client session of the started server.
func (a *Arena) Session() *mcp.ClientSession { return a.cs }

// PolicyPath is the policy file Start wrote.
func (a *Arena) PolicyPath() string { return a.policyPath }

// ServerStderr is the end of what the server wrote to stderr.
func (a *Arena) ServerStderr() string {
	if a.stderr == nil {
		return "(not started)"
	}
	return a.stderr.Tail()
}

// start writes the run's policy and starts `mcpsandbox serve` over stdio, as a client would.
func (a *Arena) start(ctx context.Context, bin string, p *policy.Policy, extraEnv ...string) error {
	b, err := policy.Marshal(p)
	if err != nil {
		return fmt.Errorf("write the run's policy: %w", err)
	}
	a.policyPath = filepath.Join(a.Own, "policy.toml")
	if err := os.WriteFile(a.policyPath, b, 0o644); err != nil {
		return fmt.Errorf("write the run's policy: %w", err)
	}
	env := slices.Concat(os.Environ(), []string{SecretEnv + "=" + a.Secret, "HOME=" + a.Home}, a.ServeEnv, extraEnv)
	if a.httpServe {
		return a.startHTTP(ctx, bin, env)
	}
	a.srv = exec.Command(bin, "serve", "--policy", a.policyPath, "--log-level", "warn")
	a.srv.Env = env
	a.stderr = &lockedBuffer{}
	a.srv.Stderr = a.stderr
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-harness", Version: "1"}, nil).
		Connect(cctx, &mcp.CommandTransport{Command: a.srv, TerminateDuration: 2 * time.Second}, nil)
	if err != nil {
		return fmt.Errorf("start `%s serve --policy %s`: %w; server said: %s", bin, a.policyPath, err, a.stderr.Tail())
	}
	a.cs = cs
	return nil
}

// serverExited reports whether the server process has ended (a crash, when the scenario did
// not kill it).
func (a *Arena) serverExited() bool {
	if a.srv == nil || a.srv.Process == nil {
		return false
	}
	return a.srv.ProcessState != nil || gone(a.srv.Process.Pid)
}

// kill SIGKILLs the server, as a crash or an OOM kill would.
func (a *Arena) kill() {
	if a.srv != nil && a.srv.Process != nil && a.killed.CompareAndSwap(false, true) {
		a.srv.Process.Kill()
	}
}

// LeaveProcess stages a survivor: a process running in the workspace, as an escaped child (or a
// sandbox serve failed to kill) would be, gone again after 6s. The survivors detector's control.
func (a *Arena) LeaveProcess() {
	cmd := exec.Command("sleep", "30")
	cmd.Dir = a.WS
	if cmd.Start() == nil {
		go func() { time.Sleep(6 * time.Second); cmd.Process.Kill(); cmd.Wait() }()
	}
}

// Pause stops the server (SIGSTOP), as a wedged server would be (the responsiveness
// detector's control); resume, called by Close, continues it.
func (a *Arena) Pause() {
	a.signal(sigStop)
	// The control's evidence must be a stopped server: wait until the kernel says so (state T),
	// sending the signal again if it has not taken.
	if a.srv == nil || a.srv.Process == nil {
		return
	}
	for i := 0; i < 50 && !stopped(a.srv.Process.Pid); i++ {
		time.Sleep(20 * time.Millisecond)
		if i%10 == 9 {
			a.signal(sigStop)
		}
	}
}
func (a *Arena) resume() { a.signal(sigCont) }
func (a *Arena) signal(s os.Signal) {
	if a.srv != nil && a.srv.Process != nil && s != nil {
		a.srv.Process.Signal(s)
	}
}

// Close stops the server and listeners and removes the scratch root.
func (a *Arena) Close() {
	if a.cs != nil {
		a.resume()
		a.endSessions()
		a.cs.Close()
	}
	for _, c := range a.closers {
		c()
	}
	if a.sibling != nil && a.sibling.Process != nil {
		a.sibling.Process.Kill()
		a.sibling.Wait()
	}
	for _, p := range taggedShared(a.Tag) { // what a breach left in /tmp and the like
		os.Remove(p)
	}
	if a.Root != "" {
		// Directories the sandbox made read-only: made removable by descriptors (stale_linux.go).
		makeRemovable(a.Root)
		os.RemoveAll(a.Root)
	}
	if a.Own != "" {
		os.RemoveAll(a.Own)
	}
}

// vanished says why the arena is no longer the one the run made ("" while it is): its scratch
// root or serve's files' directory removed or replaced during the run (another run judging it
// stale, a tmp cleaner). The detectors then compared what is not there: the run proves nothing
// (atk36b F2: a run whose arenas were removed halfway said PASS).
func (a *Arena) vanished() string {
	for _, fi := range a.made {
		d := filepath.Join(filepath.Dir(a.Root), fi.Name())
		now, err := os.Lstat(d)
		if err != nil || !os.SameFile(fi, now) {
			return fmt.Sprintf("the run's scratch directory %s was removed or replaced during the run (by another process: a verify that judged it stale, a tmp cleaner); its detectors compared nothing", d)
		}
	}
	return ""
}

// HomeElsewhere gives the arena's serve a HOME outside the arena (its own files' directory):
// a control whose weakness is a workspace around the arena's home would otherwise be refused at
// start by the workspace rule (a workspace that contains a home), and prove nothing of its
// detector. The weakness is then an operator's: a wide workspace holding keys that are not
// serve's home's.
func (a *Arena) HomeElsewhere() { a.ServeEnv = append(a.ServeEnv, "HOME="+a.Own) }

// AuditPath is where the run's audit log goes (in Own).
func (a *Arena) AuditPath() string { return filepath.Join(a.Own, "audit.jsonl") }

// SiblingPID is the host pid of the arena's sibling: a process of the sandbox's uid (when the
// harness is root; the harness's own uid otherwise) started beside the server, holding the
// server's secret in its environment. Nothing in a sandbox may trace, signal or read it; without
// the PID namespace and seccomp, a command of the same uid could. 0 when none runs.
func (a *Arena) SiblingPID() int {
	if a.sibling == nil || a.sibling.Process == nil {
		return 0
	}
	return a.sibling.Process.Pid
}

// SiblingTouched says how the sibling was reached ("" when untouched): traced (TracerPid),
// stopped, or gone.
func (a *Arena) SiblingTouched() string {
	pid := a.SiblingPID()
	if pid == 0 {
		return ""
	}
	return touched(pid)
}

// SiblingTouchedWithin is SiblingTouched, asked again every 5 ms for up to d while the answer is
// "": kill(2) returns once a stop is queued, and the sibling shows state T only when it next runs,
// which on a loaded machine can be tens of milliseconds later.
func (a *Arena) SiblingTouchedWithin(d time.Duration) string {
	deadline := time.Now().Add(d)
	for {
		h := a.SiblingTouched()
		if h != "" || !time.Now().Before(deadline) {
			return h
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// StageOutput adds text the detectors read as if a call had returned it: a control's evidence
// made outside the sandbox (the same probe run unsandboxed).
func (a *Arena) StageOutput(s string) {
	a.stagedMu.Lock()
	a.staged = append(a.staged, s)
	a.stagedMu.Unlock()
}

// StageCronFile writes a comment-only file (no schedule line: nothing runs) into the host's
// cron directory dir, under a name that does not carry the run's tag, as a user's crontab in
// the spool is named after the user; it is removed when the arena closes. A control's evidence
// for the outside detector's watch of the cron directories.
func (a *Arena) StageCronFile(dir string) error {
	p := filepath.Join(dir, "mcpsandbox-control-"+randHex(6))
	if err := os.WriteFile(p, []byte("# mcpsandbox negative control: a crontab with no job\n"), 0o644); err != nil {
		return fmt.Errorf("stage a file in %s (the control needs root): %w", dir, err)
	}
	a.closers = append(a.closers, func() { os.Remove(p) })
	return nil
}

// lockedBuffer collects serve's stderr, written by exec's copying goroutine.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.b.Len() < 1<<20 {
		l.b.Write(p)
	}
	return len(p), nil
}

// Tail is the end of what the server wrote to stderr.
func (l *lockedBuffer) Tail() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := strings.TrimSpace(l.b.String())
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return "(nothing)"
	}
	return s
}
