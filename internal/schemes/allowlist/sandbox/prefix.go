package sandbox

import (
	"path/filepath"
	"strings"
)

// ExposedSecrets names the home or secrets directory that reading dir would open ("" when
// none): dir is, or holds, a home (the user's, /root, /home) or /etc, or lies in one of their
// dot directories (~/.ssh, ~/.cargo: where tools keep credentials). verify's MS109 judges
// read_paths with it; the executor narrows a binary's install prefix with it.
func ExposedSecrets(dir, home string) string {
	dir = filepath.Clean(dir)
	for _, s := range []string{home, "/root", "/home", "/etc"} {
		if s != "" && (dir == s || strings.HasPrefix(s+"/", dir+"/") || strings.HasPrefix(dir, s+"/.")) {
			return s
		}
	}
	return ""
}

// kernelViews are the host's kernel views: /proc (every process's command line: no call has a
// procfs of its own pid namespace), /sys, /dev (devices), /run (sockets, other users' runtime
// directories).
var kernelViews = []string{"/proc", "/sys", "/dev", "/run"}

// KernelView names the host kernel view that reading dir would open ("" when none): dir is, holds
// (/) or lies in one of kernelViews, judged as written and as it resolves (/var/run is /run).
// verify's MS115 judges read_paths with it, and serve warns at start (atk40 F10).
func KernelView(dir string) string {
	dirs := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && r != dirs[0] {
		dirs = append(dirs, r)
	}
	for _, d := range dirs {
		for _, v := range kernelViews {
			if d == v || strings.HasPrefix(v, strings.TrimSuffix(d, "/")+"/") || strings.HasPrefix(d, v+"/") {
				return v
			}
		}
	}
	return ""
}

// KernelViewFix is what to do about a KernelView.
const KernelViewFix = "remove it from allowlist.read_paths; a command that needs a file there is not one to allowlist (the docker scheme gives a call a /proc of its own)"

// kernelViewWhat is what a kernel view shows a call.
func kernelViewWhat(v string) string {
	switch v {
	case "/proc":
		return "every host process and its command line, other users' and other calls' (a call has no procfs of its own)"
	case "/run":
		return "the host's sockets and users' runtime directories"
	case "/dev":
		return "the host's devices"
	}
	return "the host's kernel and device state"
}

// KernelViewFinding is the finding for read path r opening kernel view v.
func KernelViewFinding(r, v string) string {
	return r + " opens the host's " + v + " to commands: " + kernelViewWhat(v)
}
