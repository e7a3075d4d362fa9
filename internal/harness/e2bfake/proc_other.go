//go:build !linux

package e2bfake

import (
	"os/exec"
	"syscall"
)

// Off Linux the fake runs programs as the current user without process groups: it is a test
// double for the Linux CI, kept compiling elsewhere.
func sysProcAttr(root bool, uid, gid int) *syscall.SysProcAttr { return nil }

func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}

func killTagged(id string) {}

func sweepOrphans() {}
