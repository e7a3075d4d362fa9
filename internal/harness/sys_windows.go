//go:build windows

package harness

import (
	"fmt"
	"os"
)

// Windows has no SIGSTOP: the staged "wedged server" control cannot be made there.
var sigStop, sigCont os.Signal

// sigTerm ends serve at an arena's close (Windows: killed outright).
var sigTerm = os.Kill

type statT struct {
	Size  int64
	Nlink uint64
	Uid   uint32
}

// lstat knows no owner or link count on Windows; the host-side detectors that need them are
// Linux detectors (the allowlist scheme does not serve on Windows).
func lstat(p string) (statT, bool) {
	fi, err := os.Lstat(p)
	if err != nil {
		return statT{}, false
	}
	return statT{Size: fi.Size(), Nlink: 1, Uid: 1}, true
}

func stopped(int) bool { return true }

func gone(int) bool                  { return false }
func touched(int) string             { return "" }
func (a *Arena) startSibling() error { return nil }

// RunOutside needs a Unix uid to run as.
func (a *Arena) RunOutside(...string) (string, error) {
	return "", fmt.Errorf("running a probe outside the sandbox needs a Unix host")
}

// mkfifo: Windows has no named pipes in the filesystem.
func mkfifo(string) error { return fmt.Errorf("a FIFO cannot be made on Windows") }
