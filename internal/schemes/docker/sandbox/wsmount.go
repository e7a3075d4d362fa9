package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/docker/docker/api/types/mount"
	"github.com/docker/go-units"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The writable workspace (docker.workspace_writable = true) is transactional: each container
// gets its own overlay layer over the workspace (internal/serve/wslayer), which the engine mounts at
// /workspace through a volume of its `local` driver (type overlay: the engine is root and
// mounts it in the host's mount namespace; the volume is anonymous, labelled like the
// container, and removed with it). The program reads the workspace as it is and its writes land
// in the layer's upper directory on the host; after the call, once the container (and with it
// the overlay mount) is gone, serve commits the upper layer to the workspace, each change
// checked (wslayer), and the result lists what was refused. During the call a watchdog kills
// the container when the layer passes limits.workspace_quota. Where the engine cannot mount the
// layer (rootless, a remote engine, a filesystem overlayfs refuses), containers get today's
// plain bind mount and the layers say so.

// The watchdog measures a running call's layer every quotaPollMin, or four times as long as the
// last measurement took (a layer of many entries), at most quotaPollMax: a program writing 1 GB/s
// had put 262 MB in the layer when a 250 ms poll saw it pass a 20 MiB quota.
const (
	quotaPollMin = 50 * time.Millisecond
	quotaPollMax = 500 * time.Millisecond
)

// layerState says whether containers get the layer: the policy wants one (wanted) and, once the
// engine failed to mount one before it ever mounted one, why it cannot (off; from then on the
// plain bind mount). proven: a container started with a layer, so a later failure to mount one
// is not the engine's inability (a layer removed under it, a loaded host) and never turns the
// layer off: the box is retried with a fresh layer, and a second failure fails the call.
type layerState struct {
	wanted bool
	proven atomic.Bool
	off    atomic.Pointer[string]
}

func (l *layerState) on() bool { return l.wanted && l.off.Load() == nil }

// initLayer decides, once the workspace is resolved, whether containers get a layer (a writable
// workspace, where this OS has overlayfs and the engine runs here: a remote engine cannot see
// serve's directories) and which user they run as.
func (e *Executor) initLayer() {
	local := !remoteEngine(e.eng.Host)
	e.wsl.wanted = e.spec.workspace != "" && e.spec.wsWrite && wslayer.Supported && local && !mutated("docker-workspace-layer")
	if local {
		e.spec.user, e.spec.userWhy = ownerUser(e.spec)
	}
	if e.wsl.wanted {
		e.startPurging()
		e.recoverCommits()
	}
}

// ownerUser is the user a container with a writable workspace runs as: the workspace's owner,
// so the program can write files the user owns (as nobody, 65534, it got EACCES on every one).
// No capabilities, no-new-privileges and the seccomp profile are the same as for nobody; the uid
// reaches no host file but the workspace (whose writes land in the layer), and the pid, ipc and
// mount namespaces keep the user's own processes out of reach. Without the engine's userns-remap
// (Docker 20.10 here: /proc/self/uid_map is the identity) it is the host's uid, so the kernel's
// per-user limits (inotify instances, RLIMIT_NPROC) are shared with the user's own processes
// while the call runs. An explicit docker.user other than the default is kept, and so is nobody
// for a workspace root owns.
func ownerUser(s spec) (user, why string) {
	if s.workspace == "" || !s.wsWrite || s.user != defaultUser {
		return s.user, ""
	}
	uid, gid, err := owner(s.workspace)
	if err != nil || uid == 0 {
		return s.user, ""
	}
	return strconv.Itoa(uid) + ":" + strconv.Itoa(gid), " (the workspace's owner, so the program can write its files; no capabilities, as for nobody)"
}

// workspaceMount is /workspace: the box's overlay layer as an engine volume, or the plain bind.
func (s spec) workspaceMount(labels map[string]string) mount.Mount {
	if s.layerOpts == "" {
		m := mount.Mount{Type: mount.TypeBind, Source: filepath.Clean(s.workspace), Target: workspaceDir, ReadOnly: !s.wsWrite}
		if !s.wsWrite {
			m.BindOptions = s.roBind()
		}
		return m
	}
	return mount.Mount{Type: mount.TypeVolume, Target: workspaceDir, VolumeOptions: &mount.VolumeOptions{NoCopy: true, Labels: labels,
		DriverConfig: &mount.Driver{Name: "local", Options: map[string]string{"type": "overlay", "device": "overlay", "o": s.layerOpts}}}}
}

// roBind is how a read-only bind holds below its top: the engine binds recursively and, before
// Docker 25 (API 1.44) or without the kernel's mount_setattr (5.12), makes only the top mount
// read-only, so a file system mounted below the workspace was writable from the container, its
// writes on the host unchecked (atk39 F6). Recursive read-only where the engine offers it (it fails
// the start rather than degrade: rroFailed), else a non-recursive bind: mounts below show as the
// empty directories they are mounted on, as through the writable workspace's overlay layer.
func (s spec) roBind() *mount.BindOptions {
	if mutated("docker-ro-bind-recursive") {
		return nil
	}
	if s.rro {
		return &mount.BindOptions{ReadOnlyForceRecursive: true}
	}
	return &mount.BindOptions{NonRecursive: true}
}

// rroFailed says whether err is the engine failing to make a box's bind recursively read-only
// (a kernel before 5.12, a runtime without it): binds are non-recursive from then on, and the
// caller retries.
func (e *Executor) rroFailed(b *box, err error) bool {
	if b == nil || !b.rro || err == nil || !strings.Contains(strings.ToLower(err.Error()), "recursive") {
		return false
	}
	why := err.Error()
	if e.rroOff.CompareAndSwap(nil, &why) {
		e.log.Warn("the engine cannot make a bind mount recursively read-only: read-only binds are non-recursive from now on (mounts below the workspace show empty)", "err", err)
	}
	return true
}

// attachLayer gives box b its own layer when containers get one; s is b's spec.
func (e *Executor) attachLayer(b *box, s *spec) error {
	if !e.wsl.on() {
		return nil
	}
	root, err := wslayer.Root()
	if err != nil {
		return fmt.Errorf("the workspace layers' directory: %w", err)
	}
	l, err := wslayer.New(root, filepath.Clean(e.spec.workspace))
	if err != nil {
		return fmt.Errorf("a workspace layer for the call: %w", err)
	}
	// The engine (root, in the host's mount namespace) mounts it: no userxattr.
	b.layer, s.layerOpts = l, l.OverlayOptions(false)
	if f := e.opts.TestOnlyLayerOptions; f != nil {
		s.layerOpts = f(s.layerOpts)
	}
	return nil
}

// layerMountFailed says whether err is the engine failing to mount a box's layer, and the caller
// should retry: with the plain bind mount (named in the layers) from now on if the engine never
// mounted a layer, else once more with a fresh layer (layerState).
func (e *Executor) layerMountFailed(b *box, err error) bool {
	if b == nil || b.layer == nil || err == nil {
		return false
	}
	msg := err.Error()
	if !strings.Contains(msg, "mounting volume") && !strings.Contains(msg, "mount local volume") {
		return false
	}
	if e.wsl.proven.Load() {
		e.log.Warn("the engine did not mount a workspace layer, as it did before; retrying with a fresh one", "err", err)
		return true
	}
	why := msg
	if e.wsl.off.CompareAndSwap(nil, &why) {
		e.log.Error("the engine cannot mount the workspace's overlay layer: calls write the workspace directly (the plain bind mount), unchecked", "err", err)
	}
	return true
}

// runBox runs a call in b and, with a layer, settles it: a layer to apply waits for the
// container's removal (with it the volume, hence the overlay mount: nothing can write the layer
// any more) and is committed, checked; one to discard, or one the program left empty, is removed
// by the container's removal itself, off the call's path (what a process left running writes
// after the program's end is not applied).
// accepted is when serve accepted the call: the commit's conflict baseline (wslayer.StartAt).
func (e *Executor) runBox(ctx context.Context, b *box, kind, src string, timeout time.Duration, hardStop, accepted time.Time, maxOut int) (*executor.Result, error) {
	if b.layer == nil {
		return e.run(ctx, b, kind, src, timeout, hardStop, maxOut)
	}
	b.claimed.Store(true)
	e.wsl.proven.Store(true)
	stop := e.watchQuota(b)
	if mutated("docker-conflict-from-program-start") {
		b.layer.Start()
	} else {
		b.layer.StartAt(accepted)
	}
	res, err := e.run(ctx, b, kind, src, timeout, hardStop, maxOut)
	if why := e.discardWhy(b, res, err); why != "" || upperEmpty(b.layer.Upper) {
		stop()
		b.release()
		if res != nil {
			res.Workspace = &executor.WorkspaceChanges{Discarded: why}
		}
		return res, err
	}
	<-b.gone
	stop()
	ch := (*executor.WorkspaceChanges)(nil)
	if b.removeErr != nil {
		ch = b.layer.Discard("the container could not be removed, so its layer was not applied: " + b.removeErr.Error())
	} else {
		b.layer.Call = executor.CallID(ctx)
		ch = e.commit(b.layer)
	}
	if res != nil {
		res.Workspace = ch
	}
	return res, err
}

// discardWhy says why b's layer is not applied: the program never ran, or the call timed out,
// was cancelled or passed the quota (unless limits.on_interrupt = "commit"); "" to apply it.
func (e *Executor) discardWhy(b *box, res *executor.Result, err error) string {
	switch {
	case errors.Is(err, errDelivery):
		return "the program never ran"
	case e.onInterrupt() == "commit" || mutated("docker-workspace-discard"):
		return ""
	case b.quotaKilled.Load():
		return fmt.Sprintf("the call was killed for writing more than limits.workspace_quota = %s (limits.on_interrupt = \"discard\")", units.BytesSize(float64(e.quota())))
	case err != nil:
		return "the call was cancelled (limits.on_interrupt = \"discard\")"
	case res != nil && res.TimedOut:
		return "the call timed out (limits.on_interrupt = \"discard\")"
	}
	return ""
}

// upperEmpty: the program changed nothing in the workspace (every change, a deletion or a
// chmod included, puts an entry at the upper layer's top).
func upperEmpty(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = f.Readdirnames(1)
	return errors.Is(err, io.EOF)
}

// commit applies layer l to the workspace, each change checked; committed entries belong to the
// workspace's owner. The protect list is policy.DefaultProtect plus the directories the
// repository's core.hooksPath names.
func (e *Executor) commit(l *wslayer.Layer) *executor.WorkspaceChanges {
	r, err := e.commitRules()
	if err != nil {
		return l.Discard(err.Error())
	}
	ch, err := l.Commit(r)
	if err != nil {
		e.log.Error("applying a call's workspace layer failed", "err", err)
		return &executor.WorkspaceChanges{Discarded: "the layer could not be applied: " + err.Error()}
	}
	return ch
}

// commitRules are the checks a layer's commit makes: policy.DefaultProtect (what the git set-ups
// holding the workspace name, core.hooksPath, includes, programs, the commit reads itself, by
// git), the quota, the workspace's owner and a deadline of limits.timeout.
func (e *Executor) commitRules() (wslayer.Rules, error) {
	uid, gid, err := owner(e.spec.workspace)
	if err != nil {
		return wslayer.Rules{}, fmt.Errorf("the workspace's owner is unknown (%v)", err)
	}
	protect := append([]string(nil), policy.DefaultProtect...)
	var extra func(string) string
	if !mutated("docker-home-links") {
		// a home's config that is a link into the workspace (atk40 F6): protected by its path here
		e.homeLinksOnce.Do(func() {
			ws, err := filepath.EvalSymlinks(e.spec.workspace)
			if err != nil {
				ws = e.spec.workspace
			}
			e.homeLinks = &homelinks.Cache{Homes: homelinks.Homes(uid), WS: ws, Every: 2 * time.Second, Log: e.log}
		})
		hl := e.homeLinks.Get()
		pats, atRoot := homeLinkRules(hl, e.homeLinks.WS)
		protect = append(protect, pats...)
		if why := hl.Unjudged(); why != "" {
			extra = func(string) string { return why } // the walk was cut: any path may be a link's target (atk40b F7)
		} else if len(atRoot) > 0 {
			extra = func(rel string) string { return rootLinkWhy(atRoot, rel) }
		}
	}
	return wslayer.Rules{Protect: protect, Quota: e.quota(), UID: uid, GID: gid, SandboxPath: workspaceDir, Extra: extra,
		Deadline: time.Now().Add(e.pol.Limits.Timeout.Duration), Keep: wslayer.KeepRoot()}, nil
}

// homeLinkRules are a home's links into the workspace ws as the commit judges them: a target below
// the root by its path (a protect pattern with a slash is anchored), one at the root by its name
// there only (atRoot: its name -> the link), since a pattern of one name matches at any depth and
// would refuse every src/bin of the workspace for ~/bin -> ws/bin (review41 #11; the allowlist
// judges the resolved path, the target alone).
func homeLinkRules(hl homelinks.Found, ws string) (pats []string, atRoot map[string]string) {
	if mutated("docker-home-links-root-anywhere") {
		return hl.Patterns(ws), nil
	}
	for _, p := range hl.Patterns(ws) {
		if strings.Contains(p, "/") {
			pats = append(pats, p)
		}
	}
	for t, link := range hl.Targets {
		rel, err := filepath.Rel(ws, t)
		if err != nil || rel == "." || rel == ".." || strings.ContainsRune(rel, filepath.Separator) {
			continue
		}
		if atRoot == nil {
			atRoot = map[string]string{}
		}
		atRoot[rel] = link
	}
	return pats, atRoot
}

// rootLinkWhy says why rel (a slash path from the workspace's root) is protected as, or as inside,
// a root entry a home's link leads to ("" if it is not), its name compared as a case-insensitive
// file system would (refusing more, never less).
func rootLinkWhy(atRoot map[string]string, rel string) string {
	first, _, _ := strings.Cut(rel, "/")
	for name, link := range atRoot {
		if strings.EqualFold(first, name) {
			return fmt.Sprintf("%q is what %s leads to (a link from a home into the workspace)", "/"+name, link)
		}
	}
	return ""
}

// recoverCommits finishes the commits to this workspace that a serve died in (wslayer.Recover),
// before the first call.
func (e *Executor) recoverCommits() {
	root, err := wslayer.Root()
	if err != nil {
		return
	}
	rs := wslayer.Recover(root, filepath.Clean(e.spec.workspace), e.commitRules)
	wslayer.LogRecovered(e.log, rs)
	e.recoveries.Add(rs)
}

// watchQuota kills b's container when its layer passes the quota; the returned func stops it.
func (e *Executor) watchQuota(b *box) func() {
	done := make(chan struct{})
	if mutated("docker-workspace-quota") {
		return func() {}
	}
	quota := e.quota()
	go func() {
		t := time.NewTimer(quotaPollMin)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			start := time.Now()
			if b.layer.Size(quota) <= quota {
				t.Reset(min(max(quotaPollMin, 4*time.Since(start)), quotaPollMax))
				continue
			}
			b.quotaKilled.Store(true)
			ctx, cancel := context.WithTimeout(context.Background(), engineOpTimeout)
			err := e.eng.API.ContainerKill(ctx, b.id, "KILL")
			cancel()
			if err != nil && !isNotFound(err) {
				e.log.Warn("killing a container past the workspace quota failed", "container", b.id[:12], "err", err)
			}
			return
		}
	}()
	return func() { close(done) }
}

func (e *Executor) quotaNote() string {
	return fmt.Sprintf("killed: its workspace writes passed limits.workspace_quota = %s, or the layer's bounds (%d entries, %d directories deep)",
		units.BytesSize(float64(e.quota())), wslayer.MaxLayerEntries, 4*wslayer.MaxDepth)
}

// workspaceLayer: the workspace mount as the engine recorded it. A layer is in force (its
// writes are committed checked); a writable bind mount is not a layer.
func (e *Executor) workspaceLayer(mounts []mount.Mount) executor.Layer {
	ws := executor.Layer{Name: LayerWorkspace, Active: true, Detail: "none mounted"}
	for _, m := range mounts {
		if m.Target != workspaceDir {
			continue
		}
		if m.Type == mount.TypeVolume && m.VolumeOptions != nil && m.VolumeOptions.DriverConfig != nil && m.VolumeOptions.DriverConfig.Options["type"] == "overlay" {
			ws.Detail = fmt.Sprintf("%s at %s through an overlay layer per call (an engine volume): the program's writes land in the layer and "+
				"serve commits them after the call, each checked (protected names such as .git/hooks, .envrc and agent files, symlinks out, "+
				"FIFOs, devices, setuid bits, hard links, the owner), at most limits.workspace_quota = %s; "+
				"a call that times out or is cancelled is %s; %s", filepath.Clean(e.spec.workspace), workspaceDir,
				units.BytesSize(float64(e.quota())), map[string]string{"commit": "committed", "discard": "discarded"}[e.onInterrupt()],
				madeMarkSay(filepath.Clean(e.spec.workspace)))
			return ws
		}
		mode := "read-only"
		switch o := m.BindOptions; {
		case !m.ReadOnly:
		case o != nil && o.ReadOnlyForceRecursive:
			mode += ", file systems mounted below it too (recursively read-only)"
		case o != nil && o.NonRecursive:
			mode += "; file systems mounted below it show as empty directories (bound non-recursively: this engine's API is before 1.44, which cannot make them read-only)"
		default:
			mode = "read-only at its top only: file systems mounted below it are WRITABLE from the container (the engine binds recursively)"
			ws.Active = false
		}
		if !m.ReadOnly {
			mode = "WRITABLE (docker.workspace_writable): calls can change files there"
			ws.Active = false
			if why := e.layerGap(); why != "" {
				mode += ", unchecked: " + why
			}
		}
		ws.Detail = fmt.Sprintf("%s at %s, %s", m.Source, m.Target, mode)
	}
	return ws
}

// madeMarkSay says whether the workspace keeps the mark the commit's walk orders calls'
// directories by (a user xattr), probed once (attack round atk37, F2).
func madeMarkSay(ws string) string {
	_, say := wslayer.MadeMarkKept(ws)
	return say
}

// layerGap says why a writable workspace has no layer.
func (e *Executor) layerGap() string {
	switch {
	case !wslayer.Supported:
		return "no per-call overlay layer on this OS (it needs Linux overlayfs)"
	case remoteEngine(e.eng.Host):
		return "no per-call overlay layer: the engine runs on another machine (" + e.eng.Host + "), which cannot mount serve's directories"
	case e.wsl.off.Load() != nil:
		return "the engine could not mount the per-call overlay layer: " + *e.wsl.off.Load()
	case mutated("docker-workspace-layer"):
		return "the layer is switched off (mutant build)"
	}
	return ""
}

// liveLayers is the layers with the workspace's as it is now: the engine may have failed to
// mount a layer after the start-up probe.
func (e *Executor) liveLayers(ls []executor.Layer) []executor.Layer {
	if (!e.wsl.wanted || e.wsl.off.Load() == nil) && e.rroOff.Load() == nil {
		return ls
	}
	out := append([]executor.Layer(nil), ls...)
	for i := range out {
		if out[i].Name == LayerWorkspace {
			s := e.spec
			s.rro = s.rro && e.rroOff.Load() == nil
			out[i] = e.workspaceLayer([]mount.Mount{s.workspaceMount(nil)})
		}
	}
	return out
}

// layerProbe starts one container with a layer, so the layers say whether the engine can mount
// it before a call finds out (newBox falls back to the plain bind mount if it cannot).
func (e *Executor) layerProbe() {
	if !e.wsl.on() {
		return
	}
	b, err := e.newBox(false)
	if err != nil {
		e.log.Warn("the workspace layer's probe container did not start", "err", err)
		return
	}
	if b.layer != nil {
		e.wsl.proven.Store(true)
	}
	e.destroy(b)
	<-b.gone
}

// quota is limits.workspace_quota: the bytes of file content one call may leave behind.
func (e *Executor) quota() int64 { return int64(e.pol.Limits.WorkspaceQuota) }

// onInterrupt is limits.on_interrupt: "discard" (the default) or "commit".
func (e *Executor) onInterrupt() string { return e.pol.Limits.OnInterrupt }

// removed: b's container is gone (or will never be). A layer no call claims is removed.
// (gone closes before the claim is read: see release.)
func (b *box) removed() {
	if b.gone != nil {
		close(b.gone)
	}
	if b.layer != nil && !b.claimed.Load() {
		b.dropLayer()
	}
}

// release gives b's layer back to the container's removal, which removes it once the container
// is gone; if that already happened, release removes it.
func (b *box) release() {
	if b.claimed.CompareAndSwap(true, false) {
		select {
		case <-b.gone:
			b.dropLayer()
		default:
		}
	}
}

// dropLayer removes b's layer unapplied, once.
func (b *box) dropLayer() { b.dropOnce.Do(func() { _ = b.layer.Remove() }) }

// layerToolNote tells the model, in the tools' description, what happens to its writes.
func (e *Executor) layerToolNote() string {
	if !e.wsl.on() {
		return ""
	}
	return "; your changes reach the host's folder after the call, each checked: protected files (.git, .envrc, CLAUDE.md, editor and CI config, …), " +
		"symbolic links leading out, FIFOs, devices and setuid files are refused, and the result lists them"
}

// layerMaxIdle is how long a pooled container's layer may wait for its call: wslayer.Root
// removes layers older than an hour as a killed serve's leftovers, so an older one is replaced
// (an hour less the longest call, limits.timeout ≤ 10m, with a margin).
const layerMaxIdle = 30 * time.Minute

// takeFresh takes a pooled box, replacing one whose layer waited longer than layerMaxIdle; nil
// when none is ready.
func (e *Executor) takeFresh() *box {
	b := e.pool.take()
	if b != nil && b.layer != nil && time.Since(b.made) > layerMaxIdle {
		e.destroy(b)
		e.pool.release()
		return nil
	}
	return b
}
