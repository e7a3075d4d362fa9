//go:build windows

package audit

import (
	"errors"
	"fmt"
	"github.com/mcpsandbox/mcpsandbox/internal/fsmode"
	"os"

	"golang.org/x/sys/windows"
)

const openFlags = 0

// tryLock takes an exclusive lock on the whole file without waiting: busy is true when another
// handle holds it.
func tryLock(f *os.File) (busy bool, err error) {
	err = windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return true, nil
	}
	return false, err
}

// lockWait takes the lock, waiting as long as it takes (the audit-lock-bound mutant).
func lockWait(f *os.File) error {
	return windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK, 0, 1, 0, new(windows.Overlapped))
}

func unlockFile(f *os.File) {
	_ = windows.UnlockFileEx(windows.Handle(f.Fd()), 0, 1, 0, new(windows.Overlapped))
}

// checkFile refuses a log file that is not a regular file with exactly one name (the owner
// is not checked on Windows).
func checkFile(f *os.File, st os.FileInfo) error {
	if !st.Mode().IsRegular() {
		return fmt.Errorf("it is %s, not a regular file", fsmode.Describe(st.Mode()))
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(windows.Handle(f.Fd()), &info); err != nil {
		return nil
	}
	if info.NumberOfLinks != 1 {
		return fmt.Errorf("it has %d names (hard links), not one", info.NumberOfLinks)
	}
	return nil
}

func isLinkErr(error) bool { return false }

// holdShared: Windows serves release no reserve (reserve_other.go), so nothing to tell.
func holdShared(*os.File) {}

// soleHolder: as holdShared.
func soleHolder(*os.File) bool { return true }
