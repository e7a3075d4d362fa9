package sandbox

import (
	"errors"
	"fmt"
	"net"
	"os"
	"syscall"
)

// ensurePrivateDir makes dir (mode) or checks the one there: a directory (not a symlink)
// owned by serve's uid, set to mode if it was looser. Another user's directory there is
// refused with what to do: it could hand serve's sockets to its owner.
func ensurePrivateDir(dir string, mode os.FileMode) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("create %s: %w (set XDG_RUNTIME_DIR or TMPDIR to a writable place)", dir, err)
	}
	if err := checkPrivateDir(dir); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if st.Mode().Perm() != mode {
		if err := os.Chmod(dir, mode); err != nil {
			return fmt.Errorf("make %s private: %w", dir, err)
		}
	}
	return nil
}

// checkPrivateDir says whether dir is a directory (not a symlink) owned by serve's uid.
func checkPrivateDir(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is not a directory owned by uid %d (serve's): another user may have made it to reach serve's egress sockets; remove it, or set XDG_RUNTIME_DIR or TMPDIR to a private place", dir, os.Geteuid())
	}
	return nil
}

// listenUnixIn listens on dir/name. The address goes through /proc/self/fd: a socket's path
// is limited to 107 bytes, and dir (under XDG_RUNTIME_DIR or TMPDIR, with two levels of ours)
// may be longer.
func listenUnixIn(dir, name string) (*net.UnixListener, error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: fmt.Sprintf("/proc/self/fd/%d/%s", f.Fd(), name), Net: "unix"})
	if err != nil {
		return nil, err
	}
	l.SetUnlinkOnClose(false) // the fd is gone by then; the directory is removed whole
	return l, nil
}
