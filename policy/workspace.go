package policy

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/user"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
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
	// Noun names the directory in the message ("" = "workspace"): wrap.write's is no workspace.
	Noun string
	// OwnFix: the caller gives its own fix, so the message names none (two different
	// suggestions in one finding, trial36 F9).
	OwnFix bool
}

// CheckWorkspacePath refuses a workspace that resolves to, above or into a system directory
// (through a symlink, ".." segments or directly), and one that is, contains or lies in a
// home's dot directory or the user's XDG directories (HomeReach). configured is the path as
// the policy writes it, resolved the same path with symlinks and ".." resolved
// (filepath.EvalSymlinks).
func CheckWorkspacePath(configured, resolved string, u WorkspaceUse) error {
	return u.worded(checkWorkspacePath(configured, resolved, u, runtime.GOOS, HostHomes()))
}

// worded is err in u's words: its noun for "workspace", without the generic fix when u has its own.
func (u WorkspaceUse) worded(err error) error {
	if err == nil || (u.Noun == "" && !u.OwnFix) || mutated("policy-fix-generic") {
		return err
	}
	msg := err.Error()
	if u.Noun != "" {
		if rest, ok := strings.CutPrefix(msg, "workspace"); ok {
			msg = u.Noun + rest
		}
	}
	if u.OwnFix {
		fix := "use a dedicated directory such as ~/ai-workspace"
		if u.Key != "" {
			fix += " (fix " + u.Key + ")"
		}
		msg = strings.TrimSuffix(strings.TrimSuffix(msg, "; "+fix), ": "+fix)
	}
	return errors.New(msg)
}

// CheckWorkspacePathWith is CheckWorkspacePath with these Homes (init judges the home its
// answers name, as well as this process's).
func CheckWorkspacePathWith(configured, resolved string, u WorkspaceUse, h Homes) error {
	return u.worded(checkWorkspacePath(configured, resolved, u, runtime.GOOS, h))
}

func checkWorkspacePath(configured, ws string, u WorkspaceUse, goos string, homes Homes) error {
	via := ""
	if ws != filepath.Clean(configured) {
		via = fmt.Sprintf(" (%s resolves to %s)", configured, ws)
	}
	fix := "use a dedicated directory such as ~/ai-workspace"
	if u.Key != "" {
		fix += " (fix " + u.Key + ")"
	}
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
	fws := foldCase(ws, goos) // macOS's file systems ignore case: /USR/LOCAL/BIN is /usr/local/bin
	for _, d := range dirs {
		fd := foldCase(d, goos)
		switch {
		case fws == fd:
			return fmt.Errorf("workspace is the system directory %s%s: %s; %s", d, via, u.Harm, fix)
		case WithinDir(fws, fd):
			return fmt.Errorf("workspace %s%s contains the system directory %s; %s", ws, via, d, fix)
		case WithinDir(fd, fws) && !shared[d]:
			return fmt.Errorf("workspace %s%s is inside the system directory %s; %s", ws, via, d, fix)
		}
	}
	if mutated("workspace-home-dot") {
		return nil
	}
	if !mutated("workspace-home-unresolved") {
		// a home or XDG directory reached through a symlink (/home -> /data/home) is compared as
		// it resolves too, and the workspace as configured too: the resolved workspace never
		// starts with a home's path as written (attack round atk32, F1)
		homes = homes.withResolved()
	}
	for _, w := range []string{ws, filepath.Clean(configured)} {
		if !filepath.IsAbs(w) {
			continue
		}
		if why := homes.reach(w, goos); why != "" {
			return fmt.Errorf("workspace %s%s %s: the host reads its keys and configuration, and runs programs, from there; %s", ws, via, why, fix)
		}
	}
	if mutated("workspace-home-identity") || !filepath.IsAbs(ws) {
		return nil
	}
	for _, same := range homes.sameAs(ws) {
		if why := homes.reach(same, goos); why != "" {
			return fmt.Errorf("workspace %s%s (the same directory as %s: a bind mount or another name) %s: the host reads its keys and configuration, and runs programs, from there; %s", ws, via, same, why, fix)
		}
	}
	return nil
}

// foldCase is p as goos's usual file systems compare names: macOS's ignore case.
func foldCase(p, goos string) string {
	if goos == "darwin" && !mutated("workspace-darwin-case") {
		return strings.ToLower(p)
	}
	return p
}

// withResolved is h with each home and XDG directory also as its symbolic links resolve.
func (h Homes) withResolved() Homes {
	out := Homes{Homes: append([]string(nil), h.Homes...), XDG: append([]string(nil), h.XDG...)}
	for _, d := range h.Homes {
		if r := RealPath(filepath.Clean(d)); r != filepath.Clean(d) && filepath.IsAbs(d) {
			out.Homes = append(out.Homes, r)
		}
	}
	for _, kv := range h.XDG {
		k, d, _ := strings.Cut(kv, "=")
		if r := RealPath(filepath.Clean(d)); r != filepath.Clean(d) && filepath.IsAbs(d) {
			out.XDG = append(out.XDG, k+"="+r)
		}
	}
	return out
}

// Homes are the directories of the user's own the workspace rule keeps programs out of, beside
// the system directories: the user's home (as $HOME says and as the account says), root's,
// and the XDG base directories when they are set outside the home: configuration, data
// (systemd user units, desktop entries), the runtime directory (the user's sockets: the
// session bus, agents). State and cache are not: serve's own state is MS406's.
type Homes struct {
	Homes []string // home directories
	XDG   []string // "XDG_CONFIG_HOME=/path"
}

// HostHomes are this process's Homes.
func HostHomes() Homes {
	var h Homes
	if d, err := os.UserHomeDir(); err == nil {
		h.Homes = append(h.Homes, d)
	}
	if u, err := user.Current(); err == nil && u.HomeDir != "" {
		h.Homes = append(h.Homes, u.HomeDir)
	}
	h.Homes = append(h.Homes, "/root")
	h.Homes = append(h.Homes, passwdHomes("/etc/passwd")...)
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_RUNTIME_DIR"} {
		if v := xdg.Dir(k); v != "" {
			h.XDG = append(h.XDG, k+"="+v)
		}
	}
	return h
}

// passwdHomes are the home directories the accounts file names (a serve run as root reaches
// every account's: /var/lib/jenkins/.ssh is a dot directory of a home as /home/bob/.ssh is),
// less "/" and the "/nonexistent" of accounts that have none. Read bounded: it is a few KB.
func passwdHomes(file string) []string {
	f, err := os.Open(file)
	if err != nil {
		return nil
	}
	defer f.Close()
	b, _ := io.ReadAll(io.LimitReader(f, 1<<20))
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		fs := strings.Split(line, ":")
		if len(fs) < 7 || strings.HasPrefix(line, "#") {
			continue
		}
		if h := filepath.Clean(fs[5]); filepath.IsAbs(h) && h != "/" && h != "/nonexistent" {
			out = append(out, h)
		}
	}
	return out
}

// HomeReach says how a directory (clean, absolute, resolved) reaches a home: it is or contains
// one, lies in a dot directory of one (~/.ssh, ~/.config, ~/.local/bin, a client's ~/.cursor:
// keys, configuration other programs and agents obey, programs on PATH), or is, contains or
// lies in an XDG base directory; "" when none. Any /home/NAME (and /Users/NAME on macOS) is a
// home too: a serve run as root reaches every user's.
func HomeReach(dir string) string { return HostHomes().reach(filepath.Clean(dir), runtime.GOOS) }

func (h Homes) reach(ws, goos string) string {
	orig := ws
	ws = foldCase(ws, goos)
	homes := append([]string(nil), h.Homes...)
	for _, base := range []string{"/home", map[bool]string{true: "/users"}[goos == "darwin"]} {
		if rest, ok := strings.CutPrefix(ws, base+"/"); ok && base != "" {
			name, _, _ := strings.Cut(rest, "/")
			home := base + "/" + name
			if len(orig) == len(ws) {
				home = orig[:len(home)] // as the workspace spells it
			}
			homes = append(homes, home)
		}
	}
	for _, shown := range homes {
		shown = filepath.Clean(shown)
		home := foldCase(shown, goos)
		if home == "/" || home == "." || !filepath.IsAbs(home) {
			continue
		}
		switch {
		case ws == home:
			return "is the home directory " + shown
		case WithinDir(ws, home):
			return "contains the home directory " + shown
		case strings.HasPrefix(ws, home+"/."):
			dot, _, _ := strings.Cut(strings.TrimPrefix(ws, home+"/"), "/")
			if dot := filepath.Join(home, dot); ws != dot {
				return "lies in " + filepath.Join(shown, filepath.Base(dot)) + ", a dot directory of the home " + shown
			}
			return "is a dot directory of the home " + shown
		}
		if mutated("workspace-home-bin") {
			continue
		}
		// not dot directories, but the same kind: ~/bin is on PATH in Debian's and Ubuntu's
		// default ~/.profile, and macOS's ~/Library holds LaunchAgents (run at login) and the
		// clients' configuration (attack round atk32, F2)
		for _, d := range homeConfigDirs(goos) {
			if d := home + "/" + d; WithinDir(d, ws) {
				return "lies in " + filepath.Join(shown, filepath.Base(d)) + ", which the home " + shown + " runs programs or reads configuration from"
			}
		}
	}
	for _, kv := range h.XDG {
		k, d, _ := strings.Cut(kv, "=")
		d = foldCase(filepath.Clean(d), goos)
		if d == "/" {
			continue
		}
		switch {
		case ws == d:
			return "is " + k + " (" + d + ")"
		case WithinDir(ws, d):
			return "contains " + k + " (" + d + ")"
		case WithinDir(d, ws):
			return "lies in " + k + " (" + d + ")"
		}
	}
	return ""
}

// homeConfigDirs are a home's directories without a dot that the host runs programs or reads
// configuration from, as goos's file systems compare names.
func homeConfigDirs(goos string) []string {
	if goos == "darwin" {
		return []string{"bin", "library"}
	}
	return []string{"bin"}
}

// ResolveExisting is p with symbolic links resolved as far as it exists: a workspace not made
// yet lands where its existing parent leads (init creates it; verify judges it before).
func ResolveExisting(p string) string {
	var rest []string
	for dir := p; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(append([]string{r}, rest...)...)
		}
		if dir == filepath.Dir(dir) {
			return p
		}
		rest = append([]string{filepath.Base(dir)}, rest...)
	}
}

// WithinDir says whether p is dir or below it (both clean and absolute).
func WithinDir(dir, p string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/") || dir == "/" && strings.HasPrefix(p, "/")
}
