package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// workspaceUse names the docker workspace for the shared workspace rule (policy.CheckWorkspacePath).
var workspaceUse = policy.WorkspaceUse{Key: "docker.workspace",
	Harm: "calls could read the host's own files there (and change them with workspace_writable)"}

// CheckWorkspace is serve's start-up check of docker.workspace: the path as it resolves
// (symlinks, "..") must be an existing directory that is not, above or inside a system
// directory (the rule the allowlist scheme applies, policy.CheckWorkspacePath), and that does
// not hold the socket of the engine at host (unix:///path; a call that reaches the engine is
// root on the host). It returns the resolved path, which is what the containers mount: a
// symlink swapped after the check cannot move the mount. For an engine on another machine
// (tcp:// to an address not this machine's: remoteEngine) the path names a directory
// there: it is checked as written (cleaned) and mounted so, and note says that symbolic links
// there are not resolved.
func CheckWorkspace(configured, host string) (resolved, note string, err error) {
	if configured == "" {
		return "", "", nil
	}
	if remoteEngine(host) {
		ws := filepath.Clean(configured)
		note = fmt.Sprintf("docker.workspace %s is a directory on the engine's machine (%s), checked as written: serve cannot resolve symbolic links there", ws, host)
		if mutated("docker-workspace-path") {
			return ws, note, nil
		}
		return ws, note, policy.CheckWorkspacePath(configured, ws, workspaceUse)
	}
	ws, err := filepath.EvalSymlinks(configured)
	if err != nil {
		tunnel := ""
		if networkEngine(host) {
			// a loopback port forwarded to another machine's engine is taken for this machine's
			tunnel = fmt.Sprintf("; the engine at %s is on this machine (its loopback, name or address), so the workspace must be a directory here", host)
		}
		return "", "", fmt.Errorf("docker.workspace %s: %w (create it: mkdir -p %s%s)", configured, err, shellword.Quote(configured), tunnel)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return "", "", fmt.Errorf("workspace %s is not a directory (fix docker.workspace)", ws)
	}
	if mutated("docker-workspace-path") {
		return ws, "", nil
	}
	if err := policy.CheckWorkspacePath(configured, ws, workspaceUse); err != nil {
		return "", "", err
	}
	via := ""
	if ws != filepath.Clean(configured) {
		via = fmt.Sprintf(" (%s resolves to %s)", configured, ws)
	}
	for _, d := range socketDirs(host) {
		const why = "a call that reaches the socket drives the engine, which is root on the host; use a dedicated directory such as ~/ai-workspace (fix docker.workspace)"
		switch {
		case ws == d:
			return "", "", fmt.Errorf("workspace is the directory of the Docker engine's socket %s%s (%s): %s", d, via, host, why)
		case policy.WithinDir(ws, d):
			return "", "", fmt.Errorf("workspace %s%s contains the directory of the Docker engine's socket %s (%s): %s", ws, via, d, host, why)
		}
	}
	return ws, "", nil
}

// remoteEngine says whether the engine at host runs on another machine (its paths are not ours).
// An engine reached over the network at a loopback address (tcp://127.0.0.1:2375, localhost,
// [::1]) runs on this one: it resolves a bind source here, following its links, so the
// workspace is judged as it resolves and gets the transactional layer, as through the unix
// socket (attack round atk32, F6: a link to ~/.ssh was judged as written and mounted). So does
// one at this machine's own name or address (tcp://$(hostname):2376, a dockerd -H
// tcp://0.0.0.0 reached at the host's LAN address: atk33 F1): see ownHost. Local is the
// stricter judgement, so a host that cannot be told apart is taken for local.
func remoteEngine(host string) bool {
	if !networkEngine(host) {
		return false
	}
	u, err := url.Parse(host)
	if err != nil {
		return false // the engine client cannot reach it either; judge the workspace as here
	}
	if mutated("docker-engine-loopback") {
		return true
	}
	h := u.Hostname()
	return !loopbackHost(h) && (!ownHost(h) || mutated("docker-engine-own-address"))
}

// ownHostWait bounds the look-up of an engine's host name.
const ownHostWait = 3 * time.Second

// ownHosts caches ownHost's answer per name: remoteEngine is asked at start and for each call,
// and every answer must be the start's (the workspace was judged by it).
var ownHosts sync.Map

// ownHost says whether the host name h (an engine URL's) is this machine: its host name, or a
// name or address that is, or resolves to, a loopback address or one of this machine's
// interfaces' addresses. A name that does not resolve in ownHostWait is not this machine (the
// engine client could not reach it either).
func ownHost(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if v, ok := ownHosts.Load(h); ok {
		return v.(bool)
	}
	own := ownHostLookup(h)
	ownHosts.Store(h, own)
	return own
}

func ownHostLookup(h string) bool {
	if self, err := os.Hostname(); err == nil && strings.EqualFold(h, self) {
		return true
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(h); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), ownHostWait)
		addrs, _ = net.DefaultResolver.LookupNetIP(ctx, "ip", h)
		cancel()
	}
	mine := interfaceAddrs()
	for _, a := range addrs {
		a = a.WithZone("").Unmap()
		if a.IsLoopback() || a.IsUnspecified() || mine[a] {
			return true
		}
	}
	return false
}

// interfaceAddrs are the addresses of this machine's network interfaces.
func interfaceAddrs() map[netip.Addr]bool {
	out := map[netip.Addr]bool{}
	as, err := net.InterfaceAddrs()
	if err != nil {
		return out
	}
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out[ip.Unmap()] = true
			}
		}
	}
	return out
}

// networkEngine says whether host is reached over the network (not a unix socket or a pipe).
func networkEngine(host string) bool {
	for _, p := range []string{"tcp://", "http://", "https://", "ssh://"} {
		if strings.HasPrefix(host, p) {
			return true
		}
	}
	return false
}

// loopbackHost says whether a URL's host name is this machine's loopback: localhost, an
// address in 127.0.0.0/8 or ::1, or the unspecified address (0.0.0.0, ::), which connects here.
func loopbackHost(h string) bool {
	if h = strings.TrimSuffix(h, "."); strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// socketDirs are the directories holding the engine's unix socket, as named and as resolved
// (the default unix:///var/run/docker.sock: /var/run and /run).
func socketDirs(host string) []string {
	sock, ok := strings.CutPrefix(host, "unix://")
	if !ok || sock == "" {
		return nil
	}
	sock = filepath.Clean(sock)
	dirs := []string{filepath.Dir(sock)}
	if r, err := filepath.EvalSymlinks(dirs[0]); err == nil {
		dirs = append(dirs, r)
	}
	if r, err := filepath.EvalSymlinks(sock); err == nil {
		dirs = append(dirs, filepath.Dir(r))
	}
	return dirs
}
