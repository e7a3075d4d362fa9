package e2e

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// Windows has none of the Unix process and file-owner notions the suite's Linux tests use;
// these exist so the suite vets for Windows, and refuse or skip if ever reached.

func fileOwner(t *testing.T, _ os.FileInfo) (int, int) {
	t.Helper()
	t.Skip("file owners are not checked on Windows")
	return 0, 0
}

func signalPID(int, syscall.Signal) error {
	return errors.New("signalling a process by pid is not supported on Windows")
}

func detachedAttr() *syscall.SysProcAttr { return nil }

func asUserAttr(uint32, uint32) *syscall.SysProcAttr { return nil }

func mkfifo(string) error { return errors.New("FIFOs do not exist on Windows") }
