package helper

import (
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// What serve's direct start (internal/schemes/allowlist/sandbox, rawexec_linux.go) needs from the helper's
// recipe, so both ways of starting a command apply the same layers.

// Ruleset builds the call's Landlock ruleset (-1 when the kernel has no Landlock).
func Ruleset(s *Spec) (fd int, flags uint32, abi int, err error) { return landlockRuleset(s) }

// Filter is the call's seccomp program; nil when a mutant build switches seccomp off.
func Filter(s *Spec) ([]unix.SockFilter, error) {
	if mutated("seccomp") {
		return nil, nil
	}
	noNet, tcpOnly := s.NoNetwork && !mutated("seccomp-socket"), s.EgressPort != 0
	f := &filters[b2i(noNet)][b2i(tcpOnly)]
	f.once.Do(func() { f.prog, f.err = seccompFilterNet(noNet, tcpOnly) })
	return f.prog, f.err
}

// filters are the four programs Filter returns, each built at its first use: a program is a
// function of its two switches only, and building one per call was a third of an allowlist
// call's allocations. Callers only read them (the kernel copies a program at install).
var filters [2][2]struct {
	once sync.Once
	prog []unix.SockFilter
	err  error
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TmpfsOptions are the mount options of the call's private /tmp; ok is false when a mutant
// build switches the private /tmp off.
func TmpfsOptions(s *Spec) (opts string, ok bool) {
	return fmt.Sprintf("size=%d,mode=1777,nr_inodes=%d", s.TmpSize, 1<<16), !mutated("private-tmp")
}

// TmpPaths are the paths under the host's /tmp the call needs (a workspace there, say), each
// once, in spec order: they are bound back on top of the private /tmp.
func TmpPaths(s *Spec) []string {
	var out []string
	seen := map[string]bool{}
	for _, list := range [][]string{s.RWDirs, s.ReadDirs, s.ReadFiles, s.ExecFiles} {
		for _, p := range list {
			if strings.HasPrefix(p, "/tmp/") && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// Covered says whether tmp path i (of paths, dirs[j] telling which are directories) is inside
// another one that is a directory: it comes back with that directory's bind, and is not bound
// again. Binding it again would first make its mount point through the host's directory (the
// bind is in place by then), on the host's file system: opening a FIFO there waited forever.
func Covered(i int, paths []string, dirs []bool) bool {
	if mutated("tmp-keeps-nested") {
		return false
	}
	for j, d := range paths {
		if j != i && dirs[j] && d != paths[i] && Within(d, paths[i]) {
			return true
		}
	}
	return false
}

// ROBinds are the paths to mount read-only (none when a mutant build switches that off).
func ROBinds(s *Spec) []string { return mutateROBinds(s.ROBinds) }

// Pinned are the directories between the workspace and each read-only path (tools for
// tools/hooks), outermost first. Each is bound onto itself, so it is a mount point the command
// cannot rename: renaming a parent moved the read-only mount along with it, and a new hooks
// directory could then be made under the old name.
func Pinned(s *Spec) []string {
	if mutated("pin-parents") {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	ro := ROBinds(s)
	// a directory in or below a read-only one (the workspace whole, or a layer-less call's
	// directory of a protected link) is not pinned: a read-write bind of it would be copied into
	// that mount (MS_REC) and stay writable there, while its parent's being read-only already
	// keeps it from being renamed
	inRO := func(d string) bool {
		if mutated("helper-pin-under-readonly") {
			return false
		}
		for _, q := range ro {
			if q == d || Within(q, d) {
				return true
			}
		}
		return false
	}
	for _, p := range ro {
		var chain []string
		for d := path.Dir(p); d != s.Dir && Within(s.Dir, d) && !seen[d] && !inRO(d); d = path.Dir(d) {
			seen[d] = true
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			out = append(out, chain[i])
		}
	}
	return out
}

// WorkspaceAccess is the Landlock access a read-write directory gets (everything but
// executing), limited to what Landlock ABI abi knows: a rule may not name more than its ruleset
// handles. The sizes are go-landlock's table (ABI 1: 13 rights, 2: +refer, 3: +truncate,
// 5: +ioctl_dev, 9: one more).
func WorkspaceAccess(abi int) uint64 {
	rw := uint64(landlock.V11.HandledAccessFS &^ landlock.AccessFSSet(llsys.AccessFSExecute))
	if mutated("landlock-exec") {
		rw = uint64(landlock.V11.HandledAccessFS)
	}
	bits := 0
	switch {
	case abi >= 9:
		bits = 17
	case abi >= 5:
		bits = 16
	case abi >= 3:
		bits = 15
	case abi == 2:
		bits = 14
	case abi == 1:
		bits = 13
	}
	return rw & (1<<bits - 1)
}
