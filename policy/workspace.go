package policy

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
)

// The workspace rule every local scheme applies to the host directory it hands to programs: a
// workspace that is, contains or lies inside a directory the host itself lives in hands the
// host to the programs. One rule, one vocabulary: the schemes call CheckWorkspacePath with the
// path as configured and as it resolves (symlinks, ".."), each naming its own key.

// systemDirs are directories the host itself lives in: a workspace there, at one of them or
// above them hands the host to the programs.
var systemDirs = []string{"/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
	"/root", "/run", "/sbin", "/srv", "/sys", "/usr", "/var", "/home", "/tmp", "/var/tmp", "/dev/shm", "/snap", "/nix"}

// sharedDirs may hold a workspace below them, but are never one themselves.
var sharedDirs = map[string]bool{"/home": true, "/root": true, "/tmp": true, "/var/tmp": true, "/dev/shm": true, "/srv": true, "/opt": true, "/var": true, "/run": true}

// darwinSystemDirs and darwinSharedDirs add macOS's own (where /etc, /var and /tmp resolve
// into /private) for the schemes that run there (a Docker Desktop engine mounts host paths).
var (
	darwinSystemDirs = []string{"/System", "/Library", "/Applications", "/cores", "/private", "/private/etc", "/private/var", "/private/tmp", "/Users", "/Volumes"}
	darwinSharedDirs = map[string]bool{"/private": true, "/private/var": true, "/private/tmp": true, "/Users": true, "/Volumes": true}
)

// WorkspaceUse names, for CheckWorkspacePath's messages, the scheme's workspace key and what a
// program could do with a system directory as its workspace.
type WorkspaceUse struct {
	Key  string // the policy key to fix: "allowlist.workspace"
	Harm string // "commands could write what the host runs"
}

// CheckWorkspacePath refuses a workspace that resolves to, above or into a system directory
// (through a symlink, ".." segments or directly). configured is the path as the policy writes
// it, resolved the same path with symlinks and ".." resolved (filepath.EvalSymlinks).
func CheckWorkspacePath(configured, resolved string, u WorkspaceUse) error {
	return checkWorkspacePath(configured, resolved, u, runtime.GOOS)
}

func checkWorkspacePath(configured, ws string, u WorkspaceUse, goos string) error {
	via := ""
	if ws != filepath.Clean(configured) {
		via = fmt.Sprintf(" (%s resolves to %s)", configured, ws)
	}
	fix := "use a dedicated directory such as ~/ai-workspace (fix " + u.Key + ")"
	if ws == "/" {
		return fmt.Errorf("workspace is /%s: %s", via, fix)
	}
	dirs, shared := systemDirs, sharedDirs
	if goos == "darwin" {
		dirs, shared = append(append([]string(nil), systemDirs...), darwinSystemDirs...), map[string]bool{}
		for _, m := range []map[string]bool{sharedDirs, darwinSharedDirs} {
			for d := range m {
				shared[d] = true
			}
		}
	}
	for _, d := range dirs {
		switch {
		case ws == d:
			return fmt.Errorf("workspace is the system directory %s%s: %s; %s", d, via, u.Harm, fix)
		case WithinDir(ws, d):
			return fmt.Errorf("workspace %s%s contains the system directory %s; %s", ws, via, d, fix)
		case WithinDir(d, ws) && !shared[d]:
			return fmt.Errorf("workspace %s%s is inside the system directory %s; %s", ws, via, d, fix)
		}
	}
	return nil
}

// WithinDir says whether p is dir or below it (both clean and absolute).
func WithinDir(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/" && strings.HasPrefix(p, "/")
}
