//go:build linux

package sandbox

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"golang.org/x/sys/unix"
)

// probeWorkspaceLayer sees whether a call's writes can land in a layer of their own here: an
// overlay mounted on the workspace in the call's mount namespace, probed once with the same
// helper a call uses. Without a mount namespace, or where overlayfs refuses, calls write the
// workspace directly (the layer report names the gap).
func (e *Executor) probeWorkspaceLayer() {
	if !e.attr.has(unix.CLONE_NEWNS) {
		e.layerWhy = "needs a mount namespace per call, which this host does not give serve (root, or unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1): calls write the workspace directly, judged by path rules only"
		return
	}
	if mutated("workspace-layer") {
		e.layerWhy = "switched off (mutant)"
		return
	}
	if e.noLayer {
		e.layerWhy = "overlayfs could not be mounted on the workspace here (a test): calls write the workspace directly, judged by path rules only"
		return
	}
	// A layer that could not be made for a passing reason (the layers' disk or inodes full at
	// that moment, a permission) turned the transactional workspace off for serve's life, without
	// a word: calls then wrote the workspace directly, a new .envrc or CLAUDE.md landing (attack
	// round atk40, F9). Such a failure now refuses every call (broken); only a host that cannot
	// mount an overlay on this workspace at all runs calls without the layer, as documented.
	broken := func(why string) {
		e.layerWhy = why + ": calls are refused until serve is restarted with the layer working (free space or inodes there, then restart)"
		if !mutated("workspace-layer-probe-open") {
			e.layerBroken = e.layerWhy
		}
		e.log.Warn("transactional workspace unavailable", "why", e.layerWhy)
	}
	root, err := wslayer.Root()
	if err != nil {
		broken("the call layers' directory: " + err.Error())
		return
	}
	l, err := newProbeLayer(root, e.ws)
	if err != nil {
		broken("a call layer could not be made: " + err.Error())
		return
	}
	defer l.Remove()
	pc := e.cmds[e.names[0]]
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		broken(err.Error())
		return
	}
	defer devnull.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := e.spawn(ctx, probeCall, pc, devnull, nil, &checked{overlay: l.OverlayOptions(e.attr.userNS)}, true)
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("probe exited %d: %s", res.ExitCode, res.Stderr)
	}
	if err != nil {
		if passing(err.Error()) {
			broken("the probe of a call's layer failed (" + err.Error() + ")")
			return
		}
		e.layerWhy = "overlayfs could not be mounted on the workspace here (" + err.Error() + "): calls write the workspace directly, judged by path rules only"
		e.log.Warn("transactional workspace unavailable", "why", e.layerWhy)
		return
	}
	e.layerRoot = root
	rs := wslayer.Recover(root, e.ws, func() (wslayer.Rules, error) { return e.commitRules(), nil })
	wslayer.LogRecovered(e.log, rs)
	e.recoveries.Add(rs)
}

// newProbeLayer makes the probe's layer (a test makes it fail as a full disk would).
var newProbeLayer = wslayer.New

// RuleLayerUnavailable refuses a call when its writes cannot have a layer of their own for a
// passing reason (atk40 F9).
const RuleLayerUnavailable = "workspace.layer_unavailable"

// passing says whether a probe's failure reads as a passing state of the machine (space, inodes,
// memory, descriptors, quota) rather than a host that cannot mount an overlay here.
func passing(msg string) bool {
	m := strings.ToLower(msg)
	for _, w := range []string{"no space", "enospc", "quota", "edquot", "cannot allocate", "enomem", "too many open files", "emfile", "enfile", "resource temporarily unavailable", "eagain"} {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// workspaceLayer is the transactional workspace's row in the layer report.
func (e *Executor) workspaceLayer() executor.Layer {
	if e.layerRoot == "" {
		why := e.layerWhy
		if ro := e.layerlessReadOnly(); ro != "" && e.attr.has(unix.CLONE_NEWNS) {
			// a protected link or missing name (a home's link into the workspace through it)
			// cannot be mounted itself, and nothing commits: its directory is (atk41 F16)
			why += "; a protected path is a link or missing, so calls get its directory read-only whole: " + ro +
				" (replace the home's link with the file it leads to, or make the name, to have the directory writable again)"
		}
		return executor.Layer{Name: LayerWorkspace, Off: executor.OffUnavailable, Detail: why}
	}
	gone := "a file the call changed that another writer deleted or renamed meanwhile stays deleted"
	if os.Geteuid() != 0 { // the layer is mounted in a user namespace: overlayfs's marks carry no handle
		gone = "not root: a file the call changed that another writer deleted or renamed meanwhile is written back, named in the call's result"
	}
	return executor.Layer{Name: LayerWorkspace, Active: true, Detail: fmt.Sprintf(
		"a call's writes land in its own overlay layer (under %s) and reach the workspace only after serve checks each: "+
			"no protected name, no symlink out, no FIFO/socket/device, no setuid bit, hard links replaced not written through, "+
			"at most limits.workspace_quota (%s) per call; another writer's change meanwhile is kept (a conflict); %s; "+
			"a timed-out or cancelled call's writes: limits.on_interrupt = %q; %s",
		e.layerRoot, e.pol.Limits.WorkspaceQuota, gone, e.pol.Limits.OnInterrupt, madeMark(e.ws))}
}

// madeMark says whether the workspace keeps the mark the commit's walk orders calls'
// directories by (a user xattr), probed once (attack round atk37, F2).
func madeMark(ws string) string {
	_, say := wslayer.MadeMarkKept(ws)
	return say
}

// inLayer runs a call with its writes in a layer of their own, then commits them (checked) or
// discards them. A watchdog stops a call whose layer passes limits.workspace_quota.
func (e *Executor) inLayer(ctx context.Context, c executor.Call, chk *checked, run func(context.Context) (*executor.Result, error)) (*executor.Result, error) {
	if e.layerBroken != "" {
		return nil, executor.Refuse(RuleLayerUnavailable, "the transactional workspace is unavailable: %s", e.layerBroken)
	}
	if e.layerRoot == "" {
		return run(ctx)
	}
	var l *wslayer.Layer
	if len(chk.hidden) == 0 && e.mountsOK() {
		// A layer that hides files is masked before its overlay is mounted: such a call
		// makes its own mount namespace.
		if chk.mounts = e.takeMounts(); chk.mounts != nil {
			l = chk.mounts.layer.l
			defer e.after.later(chk.mounts.release) // its namespace let go once the answer is out
		}
	}
	if l == nil {
		var err error
		if l, err = e.newLayer(); err != nil {
			return nil, fmt.Errorf("the call's workspace layer: %w (free space under %s?)", err, e.layerRoot)
		}
	}
	if err := l.Mask(chk.hidden); err != nil {
		_ = l.Remove()
		return nil, err
	}
	chk.overlay = l.OverlayOptions(e.attr.userNS)
	quota := int64(e.pol.Limits.WorkspaceQuota)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	over := make(chan struct{})
	stop := make(chan struct{})
	go func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if l.Size(quota) > quota && !mutated("workspace-quota") {
					close(over)
					cancel()
					return
				}
			}
		}
	}()
	if !mutated("workspace-layer-start-unmarked") {
		l.Start() // the layer may have been made ahead: what changed before now, the call sees
	}
	res, err := run(ctx)
	close(stop)
	if err != nil {
		_ = l.Remove()
		return nil, err
	}
	select {
	case <-over:
		res.Workspace = l.Discard(fmt.Sprintf("its writes passed limits.workspace_quota (%s), or the layer's bounds (%d entries, %d directories deep): the call was stopped",
			e.pol.Limits.WorkspaceQuota, wslayer.MaxLayerEntries, 4*wslayer.MaxDepth))
		return res, nil
	default:
	}
	if (res.TimedOut || ctx.Err() != nil) && e.pol.Limits.OnInterrupt != "commit" {
		why := "the call was cancelled"
		if res.TimedOut {
			why = "the call timed out"
		}
		res.Workspace = l.Discard(why + ` (limits.on_interrupt = "discard": a half-done call's writes never reach the workspace; "commit" applies them, checked)`)
		return res, nil
	}
	l.Call = executor.CallID(ctx)
	w, err := l.Commit(e.commitRules())
	if err != nil {
		return nil, fmt.Errorf("apply the call's writes to the workspace: %w", err)
	}
	res.Workspace = w
	return res, nil
}

// escapeGlob makes a path a protect pattern that matches only itself.
func escapeGlob(p string) string {
	var b strings.Builder
	for _, r := range p {
		if r == '*' || r == '?' || r == '[' {
			b.WriteString("[" + string(r) + "]")
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
