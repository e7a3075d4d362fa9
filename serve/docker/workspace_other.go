//go:build !linux

package docker

import (
	"errors"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// layerSupported: no overlayfs here (and the engine runs in a VM that cannot see serve's
// directories): a writable workspace is the plain bind mount, the gap named in the layers.
const layerSupported = false

type wsLayer struct{}

func newWSLayer(string) (*wsLayer, error) {
	return nil, errors.New("the workspace layer needs Linux overlayfs")
}

func (*wsLayer) options() string { return "" }

func (*wsLayer) size() (int64, error) { return 0, nil }

func (*wsLayer) discard(string) {}

func owner(string) (int, int, error) { return -1, -1, errors.New("no owner on this OS") }

func (e *Executor) commit(*box, *executor.Result) {}
