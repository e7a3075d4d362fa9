//go:build unix

package sandbox

import (
	"os/exec"
	"syscall"
)

// detach puts the undertaker in a session of its own: a signal to serve's process group (a
// terminal's ^C, a supervisor's group kill) does not reach it.
func detach(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
