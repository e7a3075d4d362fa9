//go:build unix

package httpbound

import (
	"net"
	"syscall"
)

// hasInput reports whether bytes have arrived on nc that nobody has read yet (a request on
// its way), without reading them or waiting.
func hasInput(nc net.Conn) bool {
	var b [1]byte
	return peekInput(nc, b[:]) > 0
}

// peekInput copies into buf what has arrived on nc and nobody has read yet, without reading it
// or waiting; it returns how many bytes.
func peekInput(nc net.Conn, buf []byte) int {
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return 0
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return 0
	}
	n := 0
	// Control, not Read: it takes no read lock, so it never waits for the server's own Read.
	_ = rc.Control(func(fd uintptr) {
		n, _, _ = syscall.Recvfrom(int(fd), buf, syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	})
	return max(n, 0)
}
