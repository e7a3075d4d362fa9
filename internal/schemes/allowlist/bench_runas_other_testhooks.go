//go:build testhooks && !unix

package allowlist

import (
	"errors"
	"os/exec"
)

// runAs: a process's uid is a Unix notion; the bench's non-root row is measured on Linux.
func runAs(*exec.Cmd, int) error {
	return errors.New("starting serve as another uid needs a Unix host")
}
