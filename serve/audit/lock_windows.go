//go:build windows

package audit

import (
	"os"

	"golang.org/x/sys/windows"
)

// lockFile holds an exclusive lock on the whole file, so servers sharing one log keep one chain.
func lockFile(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}

func unlockFile(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}
