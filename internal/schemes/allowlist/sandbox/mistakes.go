//go:build linux

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// checkWorkspace refuses a workspace that resolves to, above or into a system directory (through
// a symlink, ".." segments or directly): the rule both local schemes share (policy).
func checkWorkspace(configured, ws string) error {
	return policy.CheckWorkspacePath(configured, ws, policy.WorkspaceUse{Key: "allowlist.workspace", Harm: "commands could write what the host runs"})
}

// interpreterIndex identifies the host's interpreters by file identity and content, so that a
// command is judged by what its path resolves to, not by the name it is given.
type interpreterIndex struct {
	byIno  map[[2]uint64]string
	bySize map[int64][]string // size -> paths, hashed only on a size match
}

func knownInterpreters() *interpreterIndex {
	ix := &interpreterIndex{byIno: map[[2]uint64]string{}, bySize: map[int64][]string{}}
	for _, n := range policy.InterpreterNames() {
		for _, dir := range []string{"/usr/local/bin", "/usr/bin", "/bin"} {
			p := filepath.Join(dir, n)
			st, err := os.Stat(p)
			if err != nil || !st.Mode().IsRegular() {
				continue
			}
			sys := st.Sys().(*syscall.Stat_t)
			ix.byIno[[2]uint64{uint64(sys.Dev), sys.Ino}] = p
			ix.bySize[st.Size()] = append(ix.bySize[st.Size()], p)
		}
	}
	return ix
}

// check refuses a command whose name does not say "interpreter" but whose binary is one: a
// symlink, hard link or copy of python or sh under an innocent name runs any code it is given,
// and nothing downstream (verify, explain, the argument check) would know.
func (ix *interpreterIndex) check(pc *pinned) error {
	if policy.IsInterpreter(pc.Name) {
		return nil
	}
	is := ix.identify(pc.exec[0], pc.SHA256)
	if is == "" {
		return nil
	}
	return fmt.Errorf("allowlisted command %q: %s is the interpreter %s, which runs any code it is given; "+
		"if that is really meant, allowlist it under the interpreter's own name (%q) so the audit and explain say so, "+
		"else point the command at the program intended (fix allowlist.commands)", pc.Name, pc.Path, is,
		strings.TrimRight(filepath.Base(is), "0123456789."))
}

// identify names the interpreter the resolved binary real (pinned with sha256) is, or "".
func (ix *interpreterIndex) identify(real, sha string) string {
	if policy.IsInterpreter(filepath.Base(real)) {
		return real
	}
	st, err := os.Stat(real)
	if err != nil {
		return ""
	}
	sys := st.Sys().(*syscall.Stat_t)
	if p, ok := ix.byIno[[2]uint64{uint64(sys.Dev), sys.Ino}]; ok {
		return p
	}
	for _, p := range ix.bySize[st.Size()] {
		if h, err := hashFile(p); err == nil && (h == sha || sha == "") {
			if sha == "" { // unpinned: compare the contents themselves
				if own, err := hashFile(real); err != nil || own != h {
					continue
				}
			}
			return p
		}
	}
	return ""
}

func hashFile(p string) (string, error) {
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// moreLayers are the private /tmp and read-only protected paths layers (kept apart from Layers' list).
func (e *Executor) moreLayers() []executor.Layer {
	m := e.measured()
	mounts := e.attr.has(unix.CLONE_NEWNS) && m.ns["mnt"]
	tmp := "no mount namespace here: a per-call directory (Landlock-allowed, removed after the call) is TMPDIR; /tmp itself stays denied"
	if mounts {
		tmp = fmt.Sprintf("each call gets an empty tmpfs of %s on /tmp (TMPDIR=/tmp), gone when the call ends", e.pol.Limits.Memory)
	}
	prot := "mount namespace unavailable: protected workspace paths are kept off only by the argument check"
	if mounts {
		prot = "existing protected paths (git dirs, hooks dirs and core.hooksPath, tool config; a symbolic link by its target) " +
			"are mounted read-only for each call, at the top level for tools and at any depth for an interpreter, with their parent directories pinned in place, so no command can change them; " +
			"an allowlisted interpreter can still replace a protected name that is a symbolic link and create protected files that do not exist yet"
	}
	return []executor.Layer{
		{Name: LayerPrivateTmp, Active: !mounts || m.privateTmp, Detail: tmp},
		{Name: LayerProtectedRO, Active: mounts && m.protectedRO, Detail: prot},
	}
}

// InterpreterBehind names the interpreter a command's binary really is (by resolved name, file
// identity or content), or "" when it is none: for verify's audit, which must judge a command
// by what its path resolves to, as serve does.
func InterpreterBehind(c policy.Command) string {
	real, err := filepath.EvalSymlinks(c.Path)
	if err != nil {
		return ""
	}
	return knownInterpreters().identify(real, c.SHA256)
}

// CheckWorkspace is serve's start-up check of allowlist.workspace (resolved through symlinks and
// ".."), for verify; one not made yet is judged where it would land (serve then says to make it).
func CheckWorkspace(configured string) error {
	ws, err := filepath.EvalSymlinks(configured)
	if os.IsNotExist(err) {
		ws, err = policy.ResolveExisting(configured), nil
	}
	if err != nil {
		return err
	}
	return checkWorkspace(configured, ws)
}
