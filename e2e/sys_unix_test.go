//go:build unix

package e2e

import (
	"os"
	"syscall"
	"testing"
)

// Unix process and file-owner helpers, apart so the suite also vets for Windows.

// fileOwner is the uid and gid owning a file.
func fileOwner(t *testing.T, st os.FileInfo) (int, int) {
	t.Helper()
	s := st.Sys().(*syscall.Stat_t)
	return int(s.Uid), int(s.Gid)
}

// signalPID sends sig to a process the test did not start.
func signalPID(pid int, sig syscall.Signal) error { return syscall.Kill(pid, sig) }

// detachedAttr starts a process in a session of its own (it outlives the test).
func detachedAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }

// asUserAttr starts a process as uid:gid (the test runs as root).
func asUserAttr(uid, gid uint32) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: gid}}
}

func mkfifo(path string) error { return syscall.Mkfifo(path, 0o666) }
