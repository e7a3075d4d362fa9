//go:build !linux

package wslayer

import (
	"errors"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// Supported says whether this build can make layers (Linux only).
const Supported = false

var errUnsupported = errors.New("the transactional workspace needs Linux (overlayfs)")

// Root is unavailable off Linux.
func Root() (string, error) { return "", errUnsupported }

// New is unavailable off Linux.
func New(root, lower string) (*Layer, error) { return nil, errUnsupported }

// Remove is a no-op off Linux.
func (l *Layer) Remove() error { return nil }

// SetPurger has no layers to purge off Linux.
func SetPurger(f func(dir string)) (unset func()) { return func() {} }

// WaitRemoved has nothing to wait for off Linux.
func WaitRemoved() {}

// Size is 0 off Linux.
func (l *Layer) Size(limit int64) int64 { return 0 }

// Discard says why off Linux.
func (l *Layer) Discard(why string) *executor.WorkspaceChanges {
	return &executor.WorkspaceChanges{Discarded: why}
}

// Commit is unavailable off Linux.
func (l *Layer) Commit(r Rules) (*executor.WorkspaceChanges, error) { return nil, errUnsupported }

// Recover has nothing to finish off Linux.
func Recover(root, ws string, rules func() (Rules, error)) []Recovered { return nil }

// MadeMarkKept has nothing to probe off Linux (no layers, no commit walk).
func MadeMarkKept(ws string) (bool, string) { return false, errUnsupported.Error() }
