package sandbox

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/internal/shellword"
)

// A call's layer is mounted by the engine, root: the kernel makes overlayfs's work/work for root
// (mode 0), and after a call that deletes a file keeps a whiteout in it; a layer that copied up
// a directory root owns holds root's too. serve, as a user who is not root, cannot remove those,
// and a layer root left under /var/tmp stayed for good, unsaid (trial37 F4). The engine removes
// them: a short container of the policy's image mounts only that layer's directory and empties
// it, and serve removes the directory; what still stays is logged with the command that removes
// it. Purges run off the call's path; Close waits for them before the engine goes.

// purgeTimeout bounds one purge container, start to removal.
const purgeTimeout = 30 * time.Second

// purgeDir is where a purge container sees the layer directory.
const purgeDir = "/layer"

// purging tracks the purges in flight (Close waits for them); done: Close has waited, later
// purges run on the caller's path.
type purging struct {
	mu    sync.Mutex
	wg    sync.WaitGroup
	done  bool
	dirs  map[string]bool // in flight: each layer's sweep (one per new layer) finds it again until it is gone
	unset func()
}

// startPurging makes e the layers' purger (initLayer, when containers get layers).
func (e *Executor) startPurging() {
	e.purge.unset = wslayer.SetPurger(e.purgeLayer)
}

// waitPurges waits for the purges in flight and stops taking new ones (Close).
func (e *Executor) waitPurges() {
	e.purge.mu.Lock()
	e.purge.done = true
	e.purge.mu.Unlock()
	e.purge.wg.Wait()
	if e.purge.unset != nil {
		e.purge.unset()
	}
}

// purgeLayer removes the layer directory dir that serve's user could not (wslayer.SetPurger).
func (e *Executor) purgeLayer(dir string) {
	if mutated("docker-layer-purge-off") {
		return
	}
	e.purge.mu.Lock()
	if e.purge.dirs[dir] {
		e.purge.mu.Unlock()
		return
	}
	if e.purge.dirs == nil {
		e.purge.dirs = map[string]bool{}
	}
	e.purge.dirs[dir] = true
	done := e.purge.done
	if !done {
		e.purge.wg.Add(1)
	}
	e.purge.mu.Unlock()
	run := func() {
		e.purgeNow(dir)
		e.purge.mu.Lock()
		delete(e.purge.dirs, dir)
		e.purge.mu.Unlock()
	}
	if done {
		run()
		return
	}
	go func() {
		defer e.purge.wg.Done()
		run()
	}()
}

// purgeNow empties dir through the engine and removes it, or logs what removes it.
func (e *Executor) purgeNow(dir string) {
	err := e.purgeByEngine(dir)
	if err == nil {
		err = os.RemoveAll(dir)
	}
	if _, serr := os.Lstat(dir); os.IsNotExist(serr) {
		e.log.Debug("removed a workspace layer's files the kernel made for the engine's user (root), through the engine", "dir", dir)
		return
	}
	e.log.Warn(fmt.Sprintf("a call's workspace layer holds files the kernel made for the engine's user (root), which serve could not remove; remove them with: sudo rm -rf %s", shellword.Quote(dir)),
		"dir", dir, "err", err)
}

// purgeByEngine empties dir in a container of the policy's image that mounts only dir: root,
// no capability but DAC_OVERRIDE (to enter and empty directories of mode 0), no network, a
// read-only root, labelled as serve's so a serve killed meanwhile has it reaped.
func (e *Executor) purgeByEngine(dir string) error {
	ctx, cancel := context.WithTimeout(context.Background(), purgeTimeout)
	defer cancel()
	labels := e.me.labels()
	labels[LabelCall] = "layer-purge-" + randHex(4)
	pids := int64(16)
	cfg := &container.Config{Image: e.spec.image, User: "0:0", Labels: labels, NetworkDisabled: true, WorkingDir: purgeDir,
		Entrypoint: []string{"/bin/sh", "-c", `exec rm -rf -- ` + purgeDir + `/* ` + purgeDir + `/.[!.]* ` + purgeDir + `/..?*`}}
	hc := &container.HostConfig{NetworkMode: "none", ReadonlyRootfs: true, CapDrop: []string{"ALL"}, CapAdd: []string{"DAC_OVERRIDE"},
		SecurityOpt: []string{"no-new-privileges"}, Resources: container.Resources{Memory: 64 << 20, MemorySwap: 64 << 20, PidsLimit: &pids},
		Mounts: []mount.Mount{{Type: mount.TypeBind, Source: dir, Target: purgeDir}}}
	cr, err := e.eng.API.ContainerCreate(ctx, cfg, hc, nil, nil, "")
	if err != nil {
		return fmt.Errorf("create a container to remove it: %w", e.eng.Unreachable(err))
	}
	defer func() {
		rctx, rcancel := context.WithTimeout(context.Background(), engineOpTimeout)
		defer rcancel()
		if err := e.eng.API.ContainerRemove(rctx, cr.ID, container.RemoveOptions{Force: true}); err != nil && !isNotFound(err) {
			e.log.Warn("could not remove a layer's purge container; the next serve removes it, or: docker rm -f "+cr.ID[:12], "err", err)
		}
	}()
	waitC, errC := e.eng.API.ContainerWait(ctx, cr.ID, container.WaitConditionNextExit)
	if err := e.eng.API.ContainerStart(ctx, cr.ID, container.StartOptions{}); err != nil {
		return fmt.Errorf("start a container to remove it: %w", e.eng.Unreachable(err))
	}
	select {
	case r := <-waitC:
		if r.StatusCode != 0 {
			return fmt.Errorf("rm in a container of %s exited %d", e.spec.image, r.StatusCode)
		}
		return nil
	case err := <-errC:
		return fmt.Errorf("wait for the container removing it: %w", e.eng.Unreachable(err))
	}
}
