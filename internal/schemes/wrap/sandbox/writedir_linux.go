package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

// nobody is the uid (and gid) the wrapped server runs as when wrap runs as root.
const nobody = 65534

// WriteDirNote says why the uid the wrapped server runs as cannot write the wrap.write
// directory dir, with the fix; "" when it can (or dir is not there: the policy's other checks
// say so). Landlock lets the server write there, but the file's owner and mode still apply:
// as root the server runs as nobody, and a directory root owns with mode 0755 fails every
// write with EACCES while the policy reads as if it allowed them (trial35 F2; the allowlist
// scheme's MS113 for its workspace).
func WriteDirNote(dir string) (note, fix string) {
	if mutated("wrap-write-owner-unchecked") {
		return "", ""
	}
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return "", ""
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return "", ""
	}
	m := st.Mode().Perm()
	if os.Geteuid() == 0 {
		switch {
		case s.Uid == nobody && m&0o300 == 0o300, s.Uid != nobody && s.Gid == nobody && m&0o030 == 0o030,
			s.Uid != nobody && s.Gid != nobody && m&0o003 == 0o003:
			return "", ""
		}
		return fmt.Sprintf("as root, the wrapped server runs as nobody (%d): %s (owner uid %d, mode %v) is in wrap.write but not nobody's to write, and every write there fails (EACCES)", nobody, dir, s.Uid, m),
			"chown -R 65534:65534 " + shellword.Quote(filepath.Clean(dir))
	}
	if unix.Access(dir, unix.W_OK|unix.X_OK) == nil {
		return "", ""
	}
	return fmt.Sprintf("the wrapped server runs as you (uid %d): %s (owner uid %d, mode %v) is in wrap.write but not yours to write, and every write there fails (EACCES)", os.Geteuid(), dir, s.Uid, m),
		"use a directory of yours, or have its owner let you write it"
}
