//go:build testhooks && unix

package allowlist

import (
	"os/exec"
	"syscall"
)

// runAs has c start as uid (and the group of the same number).
func runAs(c *exec.Cmd, uid int) error {
	c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	return nil
}
