//go:build !linux

package harness

import "fmt"

// TraceSibling needs Linux's ptrace; elsewhere the sibling control cannot be staged.
func (a *Arena) TraceSibling() error {
	return fmt.Errorf("the sibling control ptraces a process: Linux only")
}
