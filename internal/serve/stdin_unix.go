//go:build unix

package serve

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// stdinReader is serve's stdin for a stdio session. A pipe or a socket (what an MCP client
// starts serve with) is read through Go's poller: a read that waits for the client's next
// request then parks its goroutine instead of holding a thread in read(2), so the runtime does
// not hand that thread's processor back and forth (and its monitor does not wake every 20 µs)
// while a call runs. Anything else (a terminal, a file) is read as it is: non-blocking mode is
// a property of the file shared with every process that has it, which a terminal's shell would
// then inherit.
func stdinReader() io.ReadCloser {
	var st unix.Stat_t
	if unix.Fstat(0, &st) != nil {
		return os.Stdin
	}
	if t := st.Mode & unix.S_IFMT; t != unix.S_IFIFO && t != unix.S_IFSOCK {
		return os.Stdin
	}
	if unix.SetNonblock(0, true) != nil {
		return os.Stdin
	}
	return os.NewFile(0, "/dev/stdin")
}
