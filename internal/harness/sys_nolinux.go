//go:build !linux

package harness

import (
	"fmt"
	"os/exec"
)

// TraceSibling needs Linux's ptrace; elsewhere the sibling control cannot be staged.
func (a *Arena) TraceSibling() error {
	return fmt.Errorf("the sibling control ptraces a process: Linux only")
}

// startTied: only Linux ends a child with its parent (PR_SET_PDEATHSIG); elsewhere a harness
// killed outright leaves its serve over HTTP running until it is ended by hand.
func startTied(cmd *exec.Cmd) error { return cmd.Start() }
