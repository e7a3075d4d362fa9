//go:build !linux

package sandbox

import "errors"

// owner: no uid to run a container as from here (the engine runs in a VM; the workspace layer
// needs Linux overlayfs anyway).
func owner(string) (int, int, error) { return -1, -1, errors.New("no owner on this OS") }
