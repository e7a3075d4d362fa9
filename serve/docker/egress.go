package docker

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/serve/egress"
)

// Network by name (docker.network = ["pypi.org", ...]).
//
// Containers keep network "none": no interface but loopback, so no route, no DNS server and
// no host service is reachable, whatever the program does. Their one way out is serve's
// egress proxy, listening on a unix socket in a directory of serve's that is bind-mounted
// read-only into every container at egressMount. The wrapper starts a relay there (a small
// Python process on 127.0.0.1:egressPort inside the container, forwarding each connection to
// the socket), and the container's environment names it as HTTP_PROXY / HTTPS_PROXY (and
// pip's and npm's own settings). The proxy checks every request against the list, resolves
// names itself and refuses metadata, loopback and private addresses (package serve/egress).
//
// Why not an `internal` Docker network with the proxy on its gateway: a container on an
// internal network still reaches every host service bound to 0.0.0.0 through the gateway
// address (measured here: a container connected to a host port through 172.18.0.1), and
// Docker's embedded DNS server (127.0.0.11) forwards names for internal networks on engines
// before 26.0 (CVE-2024-29018). With network none neither path exists.
const (
	egressMount = "/run/mcpsandbox-egress" // in the container: the proxy socket's directory
	egressSock  = "egress.sock"
	egressPort  = 3128 // the relay on the container's loopback
)

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

// egressState is the executor's proxy for a host-list policy.
type egressState struct {
	dir   string
	proxy *egress.Proxy
	hosts []policy.HostRule
	done  chan struct{}

	warn func(msg string, args ...any)

	mu       sync.Mutex
	log      *audit.Log
	ownLog   bool
	logErr   error
	server   string
	polHash  string
	polAudit string
}

// startEgress starts the proxy for a host-list policy; nil, nil when the policy has none.
func (e *Executor) startEgress() (*egressState, error) {
	n := e.pol.Docker.Net()
	if n.Mode != policy.NetHosts {
		return nil, nil
	}
	if runtime.GOOS != "linux" {
		return nil, fmt.Errorf("docker.network host lists need serve and the engine on one Linux machine (the proxy's unix socket is mounted into containers); on %s use docker.network = \"none\", or run serve inside the Linux VM that runs the engine", runtime.GOOS)
	}
	if !strings.HasPrefix(e.eng.Host, "unix://") {
		return nil, fmt.Errorf("docker.network host lists need the engine on this machine (a unix socket), not %s: the proxy's socket is mounted into containers; use docker.network = \"none\" with a remote engine", e.eng.Where())
	}
	dir, err := os.MkdirTemp("", "mcpsandbox-egress-")
	if err != nil {
		return nil, fmt.Errorf("docker.network: create the egress proxy's socket directory: %w (set TMPDIR to a writable place)", err)
	}
	// containers run as another uid: they may pass through the directory and connect to the
	// socket, not list the directory or create anything in it (it is mounted read-only too)
	if err := os.Chmod(dir, 0o711); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: %w", err)
	}
	l, err := net.Listen("unix", filepath.Join(dir, egressSock))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: listen for the egress proxy: %w", err)
	}
	if err := os.Chmod(filepath.Join(dir, egressSock), 0o666); err != nil {
		l.Close()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("docker.network: %w", err)
	}
	s := &egressState{dir: dir, hosts: n.Hosts(), done: make(chan struct{}), log: e.opts.Audit,
		server: e.pol.Name, polHash: e.pol.Hash(), polAudit: e.pol.Audit.Path, warn: e.log.Warn}
	s.proxy = egress.New(s.hosts, egress.Options{
		Key: "docker.network", Resolver: e.opts.EgressResolver, AllowLoopback: e.opts.EgressAllowLoopback, AllowAddrs: e.opts.EgressAllowAddrs,
		Logger: e.log, Audit: s.record,
	})
	go func() {
		defer close(s.done)
		if err := s.proxy.Serve(l); err != nil && err != egress.ErrClosed {
			e.log.Error("the egress proxy stopped: containers can no longer reach the listed hosts", "err", err)
		}
	}()
	e.log.Info("egress proxy serving docker.network", "hosts", n.String(), "socket", filepath.Join(dir, egressSock))
	return s, nil
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

// record writes one decision to the audit log.
func (s *egressState) record(d egress.Decision) {
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
	if err := s.log.Append(d.Entry(s.server, "", s.polHash)); err != nil {
		s.warn("could not write an egress decision to the audit log", "decision", d.String(), "err", err)
	}
}

// close stops the proxy, ends its tunnels and removes the socket directory.
func (s *egressState) close() {
	if s == nil {
		return
	}
	s.proxy.Close()
	<-s.done
	os.RemoveAll(s.dir)
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
