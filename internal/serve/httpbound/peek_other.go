//go:build !unix

package httpbound

import "net"

// hasInput: not known on this platform; a connection counts as silent until its first read.
func hasInput(net.Conn) bool { return false }
