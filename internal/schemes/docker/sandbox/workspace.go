package sandbox

import (
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"

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
// (tcp:// to an address not this machine's loopback: remoteEngine) the path names a directory
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
			tunnel = fmt.Sprintf("; the engine at %s is on this machine's loopback, so the workspace must be a directory here", host)
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
// socket (attack round atk32, F6: a link to ~/.ssh was judged as written and mounted).
func remoteEngine(host string) bool {
	if !networkEngine(host) {
		return false
	}
	u, err := url.Parse(host)
	return err != nil || !loopbackHost(u.Hostname()) || mutated("docker-engine-loopback")
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
