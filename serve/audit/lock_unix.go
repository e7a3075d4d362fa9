//go:build unix

package audit

import (
	"os"

	"golang.org/x/sys/unix"
)

// lockFile holds an exclusive advisory lock, so servers sharing one log keep one chain.
func lockFile(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX) }

func unlockFile(f *os.File) { _ = unix.Flock(int(f.Fd()), unix.LOCK_UN) }
