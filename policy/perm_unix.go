//go:build unix

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// CheckFileSafe refuses a policy file that someone other than its reader or root could have
// written, as ssh refuses a loose key: the file must be owned by root or the current user and
// writable by no one else, and its directory must not let others replace it.
func CheckFileSafe(path string) error {
	return checkOwned(path, "policy file", "the policy file", "allow themselves any command")
}

// CheckBinarySafe is CheckFileSafe for the binary client entries run (init --command): one
// another user may replace runs as whoever starts the client (trial30 F18).
func CheckBinarySafe(path string) error {
	return checkOwned(path, "the binary", "the binary", "replace what your clients run")
}

func checkOwned(path, kind, ref, harm string) error {
	me := uint32(os.Geteuid())
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("%s %s: %w", kind, path, err)
	}
	for i, p := range []string{abs, filepath.Dir(abs)} {
		st, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("%s %s: %w", kind, path, err)
		}
		sys, ok := st.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		what := kind + " " + path
		if i == 1 {
			what = "the directory " + p + " holding " + ref
		}
		sticky := i == 1 && st.Mode()&os.ModeSticky != 0
		switch {
		case sys.Uid != 0 && sys.Uid != me:
			return withFix(fmt.Sprintf("%s is owned by uid %d, not by you (uid %d) or root: whoever owns it decides what runs", what, sys.Uid, me), fmt.Sprintf("chown %d %s", me, p))
		case st.Mode()&0o002 != 0 && !sticky:
			return withFix(fmt.Sprintf("%s is writable by everyone: anyone could %s", what, harm), "chmod o-w "+p)
		case st.Mode()&0o020 != 0 && sys.Gid != 0 && !sticky:
			return withFix(fmt.Sprintf("%s is writable by group %d: its members could %s", what, sys.Gid, harm), "chmod g-w "+p)
		}
	}
	return nil
}
