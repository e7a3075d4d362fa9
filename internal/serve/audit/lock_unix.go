//go:build unix

package audit

import (
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/fsmode"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// openFlags are added to the log's open: its own name must not be a symbolic link (a parent
// directory may be one), and a FIFO or device at the path must not block the open.
const openFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// tryLock takes an exclusive advisory lock without waiting: busy is true when another open
// file description (another serve, another process) holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if errors.Is(err, unix.EWOULDBLOCK) {
		return true, nil
	}
	return false, err
}

// lockWait takes the lock, waiting as long as it takes (the audit-lock-bound mutant).
func lockWait(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX) }

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }

// holdShared marks f (a Log's anchor) as in use for the Log's life: a shared lock each serve
// writing the log holds, so that the last one to close it can tell it is the last (soleHolder).
func holdShared(f *os.File) {
	for i := 0; i < 50; i++ { // an exclusive holder (a closing serve's soleHolder) lets go at once
		if unix.Flock(int(f.Fd()), unix.LOCK_SH|unix.LOCK_NB) == nil {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// soleHolder says whether no other open file description holds f's lock: this serve is the
// last one writing the log (its exclusive lock, if taken, goes with f's close).
func soleHolder(f *os.File) bool {
	busy, err := tryLock(f)
	return err == nil && !busy
}

// checkFile refuses a log file that is not a regular file owned by serve's effective user
// with exactly one name: anything else may send the lines elsewhere (a FIFO nobody reads, a
// device, a second name in another directory) or be read or truncated by someone else.
func checkFile(_ *os.File, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("it is %s, not a regular file", fsmode.Describe(st.Mode()))
	}
	if st.Mode()&0o111 != 0 {
		// a program, not a log: a root serve appended its lines to /usr/bin/python3.11 given
		// that path (attack round atk24c)
		return fmt.Errorf("it is executable (mode %v): a program, not a log", st.Mode().Perm())
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if euid := os.Geteuid(); int64(sys.Uid) != int64(euid) {
		return fmt.Errorf("it is owned by uid %d, not by serve's user (uid %d)", sys.Uid, euid)
	}
	if n := uint64(sys.Nlink); n != 1 {
		return fmt.Errorf("it has %d names (hard links), not one", n)
	}
	return nil
}

// isLinkErr tells whether an open with O_NOFOLLOW failed because the name is a symbolic link.
func isLinkErr(err error) bool {
	return errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK) // EMLINK: FreeBSD's answer
}
