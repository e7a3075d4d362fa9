//go:build !linux

package harness

import (
	"fmt"
	"syscall"
)

// TraceSibling needs Linux's ptrace; elsewhere the sibling control cannot be staged.
func (a *Arena) TraceSibling() error {
	return fmt.Errorf("the sibling control ptraces a process: Linux only")
}

// serveAttr: only Linux ends a child with its parent (PR_SET_PDEATHSIG); elsewhere a harness
// killed outright leaves its serve running until it is ended by hand.
func serveAttr() *syscall.SysProcAttr { return nil }
