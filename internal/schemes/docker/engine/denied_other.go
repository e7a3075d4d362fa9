//go:build !unix

package engine

import "errors"

// socketOwner: no unix sockets' owners here (Windows engines listen on named pipes).
func socketOwner(string) (group, desc string, err error) {
	return "", "", errors.New("no unix socket owners on this system")
}
