//go:build linux

package sandbox

import (
	"sync/atomic"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"golang.org/x/sys/unix"
)

// Prepared workspace layers. Making a call's layer (a private directory, its upper and work
// directories, the upper given the workspace's mode and owner) was a few hundred microseconds
// of the call's path; a layer is made ahead of the call instead, while serve is idle.
//
// Shared or fresh: nothing is shared. A prepared layer is new and empty, under serve's private
// 0700 layer root, and used by exactly one call (taken out of the pool); the commit and its
// checks are the same. What a layer copies from the workspace when it is made (the upper
// directory takes the workspace's mode and owner, which the merged root shows the call) is
// compared with the workspace when the layer is taken: a workspace changed since (chmod,
// chown, replaced) gets a layer made now, so a call never sees attributes the workspace no
// longer has.

// preparedLayer is a layer made ahead, with the workspace's identity and attributes then.
type preparedLayer struct {
	l  *wslayer.Layer
	st unix.Stat_t
}

// same says whether the workspace is still what it was when the layer was made.
func (p preparedLayer) same(now *unix.Stat_t) bool {
	return now.Dev == p.st.Dev && now.Ino == p.st.Ino && now.Mode == p.st.Mode && now.Uid == p.st.Uid && now.Gid == p.st.Gid ||
		mutated("layer-prepared-stale")
}

// layerMadeHook, when a test sets it, runs after a layer is made ahead and before it is pooled.
var layerMadeHook atomic.Pointer[func(*Executor)]

// prepareLayer fills the pool in the background; one filler at a time.
func (e *Executor) prepareLayer() {
	if e.layerRoot == "" || e.layers == nil || e.closed.Load() || !e.layersFilling.CompareAndSwap(false, true) {
		return
	}
	defer e.layersFilling.Store(false)
	e.layersMu.Lock()
	if e.closed.Load() {
		e.layersMu.Unlock()
		return
	}
	if !mutated("layers-fill-untracked") {
		e.layersMaking.Add(1)
		defer e.layersMaking.Done()
	}
	e.layersMu.Unlock()
	for len(e.layers) < cap(e.layers) && !e.closed.Load() {
		var st unix.Stat_t
		if unix.Stat(e.ws, &st) != nil {
			return
		}
		l, err := wslayer.New(e.layerRoot, e.ws)
		if err != nil {
			return // the call makes its own, and reports why it cannot
		}
		if h := layerMadeHook.Load(); h != nil {
			(*h)(e)
		}
		select {
		case e.layers <- preparedLayer{l, st}:
			if e.closed.Load() {
				e.closeLayers()
			}
		default:
			_ = l.Remove()
			return
		}
	}
}

// newLayer is the call's layer: the prepared one if the workspace is as it was when it was
// made, else one made now; the next is prepared in the background.
func (e *Executor) newLayer() (*wslayer.Layer, error) {
	defer e.after.later(e.prepareLayer)
	select {
	case p := <-e.layers:
		var now unix.Stat_t
		if unix.Stat(e.ws, &now) == nil && p.same(&now) {
			return p.l, nil
		}
		_ = p.l.Remove()
	default:
	}
	return wslayer.New(e.layerRoot, e.ws)
}

// waitLayers waits for a filler (Close, after closed is set): one that saw closed unset has
// registered by the time the lock is taken, and one that comes later sees it set (a registered
// filler never takes the lock again). Without this a layer made as serve stopped was removed
// after Close returned, or never.
func (e *Executor) waitLayers() {
	e.layersMu.Lock()
	defer e.layersMu.Unlock()
	e.layersMaking.Wait()
}

// closeLayers removes the prepared layers (Close).
func (e *Executor) closeLayers() {
	for {
		select {
		case p := <-e.layers:
			_ = p.l.Remove()
		default:
			return
		}
	}
}
