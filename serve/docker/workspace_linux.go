package docker

import (
	"fmt"
	"os"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	wslayer "github.com/mcpsandbox/mcpsandbox/serve/docker/wslscratch"
)

// layerSupported: this OS has overlayfs, so a writable workspace gets a layer per container.
const layerSupported = true

// wsLayer is one container's workspace layer (serve/wslayer): an overlay upper layer over the
// workspace, which the engine mounts at /workspace; serve commits it, checked, after the call.
type wsLayer struct{ l *wslayer.Layer }

func newWSLayer(lower string) (*wsLayer, error) {
	root, err := wslayer.Root()
	if err != nil {
		return nil, fmt.Errorf("the workspace layers' directory: %w", err)
	}
	l, err := wslayer.New(root, lower)
	if err != nil {
		return nil, fmt.Errorf("a workspace layer over %s: %w", lower, err)
	}
	return &wsLayer{l}, nil
}

// options is the overlay's mount data; the engine (root, in the host's mount namespace) mounts
// it, so no userxattr.
func (w *wsLayer) options() string { return w.l.OverlayOptions(false) }

func (w *wsLayer) size() (int64, error) { return w.l.Size() }

func (w *wsLayer) discard(why string) { w.l.Discard(why) }

// owner is the uid and gid owning path.
func owner(path string) (uid, gid int, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return -1, -1, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1, fmt.Errorf("%s: no owner", path)
	}
	return int(st.Uid), int(st.Gid), nil
}

// commit applies b's layer to the workspace, each change checked; committed entries belong to
// the workspace's owner.
func (e *Executor) commit(b *box, res *executor.Result) {
	uid, gid, err := owner(e.spec.workspace)
	if err != nil {
		b.layer.discard(fmt.Sprintf("the workspace's owner is unknown (%v)", err))
		return
	}
	_, err = b.layer.l.Commit(wslayer.Rules{Protect: policy.DefaultProtect, Quota: e.quota(), UID: uid, GID: gid, SandboxPath: workspaceDir})
	if err != nil {
		e.log.Error("committing a call's workspace layer failed", "err", err)
	}
}
