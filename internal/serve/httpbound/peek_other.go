//go:build !unix

package httpbound

import "net"

// hasInput: not known on this platform; a connection counts as silent until its first read.
func hasInput(net.Conn) bool { return false }

// peekInput: not known on this platform; a connection shows its token once read.
func peekInput(net.Conn, []byte) int { return 0 }
