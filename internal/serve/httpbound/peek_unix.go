//go:build unix

package httpbound

import (
	"net"
	"syscall"
)

// hasInput reports whether bytes have arrived on nc that nobody has read yet (a request on
// its way), without reading them or waiting.
func hasInput(nc net.Conn) bool {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var b [1]byte
	n := 0
	// Control, not Read: it takes no read lock, so it never waits for the server's own Read.
	_ = rc.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return n > 0
}
