//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/wslayer"
	"golang.org/x/sys/unix"
)

// Prepared mount namespaces. A call's mount namespace (the copy of serve's mount table made
// private, the private /tmp, the workspace's overlay with the call's layer, the pins and the
// read-only protected paths) was made by the call's child between clone and exec, the largest
// part of the sandbox's start left on the call's path (docs/perf-allowlist.md). A direct start
// (rawexec_linux.go) takes one made ahead instead, while serve waited for the call: a child
// forked for it alone makes the mount list the call's plan would make, hands the namespace to
// serve and exits; the call's child enters it with setns instead of making it.
//
// What is shared and what is fresh (a security decision, docs/perf-allowlist.md): nothing is
// shared. A prepared namespace has its own new, empty layer (the overlay's upper directory);
// no process runs in it before its call, and it goes to exactly one call: taken out of the
// slot, entered by that call's child, closed when the call ends. It is used only if it is what
// the call would have made, judged when it is taken:
//   - the same mount list: the key (mountsKey) is every input planMounts builds the list from
//     (the private /tmp's options, the paths under /tmp bound back, the overlay's options, the
//     pins, the read-only paths, the workspace), so a protected path made or removed since, or
//     a command with other paths, gets its namespace made by its own child, as before;
//   - the same files: every path the list mounts or binds is still the file it was when it was
//     mounted (device, inode, type, stat'ed before and after the list was made, and at the
//     take): a workspace or a protected directory replaced since is not used through a mount
//     made on its predecessor;
//   - the workspace's attributes the layer copied (preparedLayer.same);
//   - its age: at most mountsMaxAge, and a timer drops one that waited longer, so an idle
//     serve holds no copy of the host's mount table (an unmounted disk stays busy while a copy
//     holds it).
// An argument that needs more (hard-linked files bound read-only, a layer that hides linked
// files) does not fit, and the call makes its own. A namespace that cannot be prepared changes
// nothing but the speed.

// mountsMaxAge bounds how long a prepared mount namespace waits for its call.
const mountsMaxAge = 2 * time.Second

// mountsBackoff is how many calls prepare no namespace after one came while its was being made.
const mountsBackoff = 8

// preparedMounts is a mount namespace made ahead of a call, with its workspace layer.
type preparedMounts struct {
	ns    *os.File
	layer preparedLayer
	// the call's Landlock ruleset, built with it from the same spec (-1: none, or taken by
	// the call's plan, which closes it)
	rulesetFD    int
	rulesetFlags uint32
	abi          int
	key          string
	ids          []pathID
	at           time.Time
	timer        *time.Timer
	once         sync.Once
}

// takeRuleset hands the prepared ruleset to the call's plan, which closes it.
func (pm *preparedMounts) takeRuleset() (fd int, flags uint32, abi int) {
	fd, pm.rulesetFD = pm.rulesetFD, -1
	return fd, pm.rulesetFlags, pm.abi
}

// drop closes what the call did not take (synchronously: the caller is off the call's path or
// needs the namespace gone now).
func (pm *preparedMounts) drop(removeLayer bool) {
	if pm.timer != nil {
		pm.timer.Stop()
	}
	pm.ns.Close()
	if pm.rulesetFD >= 0 {
		unix.Close(pm.rulesetFD)
		pm.rulesetFD = -1
	}
	if removeLayer {
		_ = pm.layer.l.Remove()
	}
}

// pathID is a path's identity as serve sees it: what a mount on it was made on.
type pathID struct {
	path     string
	dev, ino uint64
	typ      uint32
	missing  bool
}

func statID(p string) pathID {
	var st unix.Stat_t
	if unix.Stat(p, &st) != nil {
		return pathID{path: p, missing: true}
	}
	return pathID{path: p, dev: st.Dev, ino: st.Ino, typ: st.Mode & unix.S_IFMT}
}

// preparedPaths are the paths a spec's mount list mounts on or binds, and its Landlock ruleset
// names, from serve's view.
func preparedPaths(s *helper.Spec) []string {
	rs := rulesetSpec(s)
	out := []string{s.Dir}
	seen := map[string]bool{s.Dir: true}
	for _, l := range [][]string{helper.TmpPaths(s), helper.Pinned(s), helper.ROBinds(s), rs.ReadDirs, rs.ReadFiles, rs.ExecFiles, rs.DevFiles, rs.RWDirs} {
		for _, p := range l {
			// Once each: a pinned command is also in the ruleset's exec files, and fits stats
			// every path here on the call's path.
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func pathIDs(paths []string) []pathID {
	ids := make([]pathID, len(paths))
	for i, p := range paths {
		ids[i] = statID(p)
	}
	return ids
}

// mountsKey is everything planMounts builds a spec's mount list from, and helper.Ruleset its
// Landlock ruleset.
func mountsKey(s *helper.Spec) string {
	var b strings.Builder
	opts, ok := helper.TmpfsOptions(s)
	rs := rulesetSpec(s)
	fmt.Fprintf(&b, "%t\x00%s\x00%s\x00%s\x00%t\x00", ok, opts, s.Dir, s.Overlay, s.NoNetwork)
	for _, list := range [][]string{helper.TmpPaths(s), helper.Pinned(s), helper.ROBinds(s), rs.ReadDirs, rs.ReadFiles, rs.ExecFiles, rs.DevFiles, rs.RWDirs} {
		for _, p := range list {
			b.WriteString(p)
			b.WriteByte(0)
		}
		b.WriteByte(1)
	}
	return b.String()
}

// mountsOK says whether calls here take prepared mount namespaces: a root serve's direct starts
// with a mount namespace and a workspace layer (one that is not root makes each call's in the
// call's own user namespace).
func (e *Executor) mountsOK() bool {
	return e.directOK() && !e.attr.userNS && e.attr.has(unix.CLONE_NEWNS) && e.layerRoot != "" && !e.closed.Load() && !e.unprepared
}

// fits says whether pm is the mount namespace spec s's call would make now.
func (pm *preparedMounts) fits(s *helper.Spec) bool {
	if mutated("mounts-prepared-stale") {
		return true
	}
	if time.Since(pm.at) > mountsMaxAge && !mutated("mounts-prepared-age") || mountsKey(s) != pm.key {
		return false
	}
	for _, id := range pm.ids {
		if statID(id.path) != id {
			return false
		}
	}
	return true
}

// prepared is the call's prepared mount namespace (nil: none, or no check: the probe).
func (c *checked) prepared() *preparedMounts {
	if c == nil {
		return nil
	}
	return c.mounts
}

// release closes the namespace of a call that took it (off the call's path: its teardown
// unmounts the call's /tmp and overlay); the layer is the call's, which commits or discards it.
func (pm *preparedMounts) release() {
	if mutated("mounts-held") {
		return
	}
	pm.once.Do(func() { go pm.drop(false) })
}

// dropLocked drops a namespace no call took (it waited too long, or the workspace changed
// since) with its layer, off the caller's path; the caller holds mountsMu and has just taken pm
// out of the slot. Close waits for it (closeMounts, as for one being made): a serve stopped right
// after leaves no layer behind. Attack round atk22: the drop was a goroutine Close did not wait
// for, and a serve stopped as its namespace expired left the layer under the layer root until
// the next serve swept it. Counted under the lock that orders it with closeMounts: pm was in
// the slot, so closeMounts has not looked yet, and its Wait comes after this Add.
func (e *Executor) dropLocked(pm *preparedMounts) {
	if mutated("mounts-drop-untracked") {
		go pm.drop(true)
		return
	}
	e.mountsMaking.Add(1)
	go func() {
		defer e.mountsMaking.Done()
		pm.drop(true)
	}()
}

// takeMounts hands out the prepared mount namespace for one call (nil: none ready, or the
// workspace is not what its layer was made from). The caller owns it: release it, or enter it
// and release it when the call ends.
func (e *Executor) takeMounts() *preparedMounts {
	// A call that comes while its namespace is still being made does not wait for it (back to
	// back, waiting was slower than making its own), and the next few calls prepare none: calls
	// that come faster than namespaces are made would only have the making compete with them
	// for the CPUs (docs/perf-allowlist.md).
	e.mountsMu.Lock()
	if e.mounts == nil && e.mountsFilling {
		e.mountsSkip = mountsBackoff
	}
	pm := e.mounts
	e.mounts = nil
	if pm != nil && mutated("mounts-prepared-once") {
		e.mounts = pm.again()
	}
	if pm == nil {
		e.mountsMu.Unlock()
		return nil
	}
	var now unix.Stat_t
	if unix.Stat(e.ws, &now) != nil || !pm.layer.same(&now) {
		e.dropLocked(pm)
		e.mountsMu.Unlock()
		return nil
	}
	e.mountsMu.Unlock()
	return pm
}

// again is the same namespace and layer once more (for the mounts-prepared-once mutant only).
func (pm *preparedMounts) again() *preparedMounts {
	fd, err := unix.FcntlInt(pm.ns.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return nil
	}
	return &preparedMounts{ns: os.NewFile(uintptr(fd), pm.ns.Name()), layer: pm.layer, rulesetFD: -1, key: pm.key, ids: pm.ids, at: pm.at}
}

// prepareMounts makes the mount namespace for a call like the one with spec s (its mount list
// with a new layer), if the slot is empty and none is being made. The call that just ran names
// what its successor most likely needs (its command's paths, the protected paths it was given,
// an interpreter's nested ones, walked for it): a successor that needs other mounts does not
// take it (fits).
func (e *Executor) prepareMounts(s helper.Spec) {
	if !e.mountsOK() {
		return
	}
	e.mountsMu.Lock()
	if e.mounts != nil || e.mountsFilling || e.mountsSkip > 0 || e.closed.Load() {
		if e.mountsSkip > 0 {
			e.mountsSkip--
		}
		e.mountsMu.Unlock()
		return
	}
	e.mountsFilling = true
	e.mountsMaking.Add(1) // Close waits for it: nothing made here outlives serve
	e.mountsMu.Unlock()
	defer e.mountsMaking.Done()
	pm := e.newPrepared(s)
	e.mountsMu.Lock()
	e.mountsFilling = false
	if pm != nil && (e.mounts != nil || e.closed.Load()) {
		e.mountsMu.Unlock()
		pm.drop(true)
		return
	}
	defer e.mountsMu.Unlock()
	if pm == nil {
		return
	}
	e.mounts = pm
	age := mountsMaxAge
	if mutated("mounts-prepared-age") {
		age = time.Hour
	}
	pm.timer = time.AfterFunc(age, func() {
		e.mountsMu.Lock()
		if e.mounts == pm {
			e.mounts = nil
			e.dropLocked(pm)
		}
		e.mountsMu.Unlock()
	})
}

// newPrepared makes a mount namespace and its layer for spec s (nil: it could not, or something
// it mounts moved meanwhile).
func (e *Executor) newPrepared(s helper.Spec) *preparedMounts {
	if !e.mountListLocal(&s) && !mutated("prepare-nonlocal") {
		// Made here, its lookups would wait in serve's vfork child: serve's garbage collection
		// with them (spawnDirect). Such calls go through the exec helper.
		return nil
	}
	var st unix.Stat_t
	if unix.Stat(e.ws, &st) != nil {
		return nil
	}
	l, err := wslayer.New(e.layerRoot, e.ws)
	if err != nil {
		return nil
	}
	s.Overlay = l.OverlayOptions(e.attr.userNS)
	paths := preparedPaths(&s)
	before := pathIDs(paths)
	ns, err := e.newMountNS(&s, "the prepared mount namespace", childSetupLimit)
	if err != nil {
		_ = l.Remove()
		e.log.Debug("could not prepare a mount namespace ahead of a call (calls make their own)", "err", err)
		return nil
	}
	pm := &preparedMounts{ns: ns, layer: preparedLayer{l, st}, rulesetFD: -1, key: mountsKey(&s), at: time.Now()}
	rs := rulesetSpec(&s)
	if pm.rulesetFD, pm.rulesetFlags, pm.abi, err = helper.Ruleset(&rs); err != nil {
		pm.rulesetFD = -1 // the call builds its own, and reports why it cannot
	}
	pm.ids = pathIDs(paths)
	for i := range before {
		if before[i] != pm.ids[i] {
			pm.drop(true) // something moved while they were made: not used
			return nil
		}
	}
	return pm
}

// closeMounts drops the prepared mount namespace (Close), after the one being made, if any.
func (e *Executor) closeMounts() {
	// Under the lock: a filler that saw closed unset has registered with mountsMaking by now,
	// and one that finishes later sees it set and drops what it made before it is done.
	e.mountsMu.Lock()
	pm := e.mounts
	e.mounts = nil
	e.mountsMu.Unlock()
	if pm != nil {
		pm.drop(!mutated("mounts-prepared-leak"))
	}
	e.mountsMaking.Wait()
}

// preparePlan is the plan of a child that only hands its mount namespace to serve on sock
// (SCM_RIGHTS) and exits, reporting a failed step on the status pipe; newMountNS adds the
// mount list and the new namespace.
func preparePlan(status, sock int) *rawPlan {
	p := &rawPlan{prepare: true, netns: -1, mntns: -1, rulesetFD: -1, binFD: -1,
		stdin: -1, stdout: -1, stderr: -1, status: status, sock: sock}
	p.empty, _ = cstr("")                   // no NUL: cannot fail
	p.nsPath, _ = cstr("/proc/self/ns/mnt") // nor here
	rights := unix.UnixRights(0)
	p.nsRights = (*int32)(unsafe.Pointer(&rights[unix.CmsgSpace(0)]))
	one := []byte{0}
	iov := unix.Iovec{Base: &one[0]}
	iov.SetLen(1)
	p.nsMsg = &unix.Msghdr{Iov: &iov, Iovlen: 1, Control: &rights[0]}
	p.nsMsg.SetControllen(len(rights))
	return p
}

// newMountNS makes spec s's mount list in a new mount namespace, in a child forked for that
// alone (the direct start's child, rawexec_unsafe_linux.go, told to stop after the list), and
// returns the namespace. The child runs nothing but the list's system calls and exits. name is
// what its errors name (the call's command, or the namespace made ahead of a call); limit is the
// child's deadline.
func (e *Executor) newMountNS(s *helper.Spec, name string, limit time.Duration) (*os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket pair: %w", err)
	}
	recv, send := os.NewFile(uintptr(pair[0]), "mntns-recv"), os.NewFile(uintptr(pair[1]), "mntns-send")
	defer recv.Close()
	defer send.Close()
	stR, stW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer stR.Close()
	defer stW.Close()
	p := preparePlan(int(stW.Fd()), int(send.Fd()))
	p.flags, p.mounts, p.limit = unix.CLONE_NEWNS, true, limit
	if err := e.planMounts(p, s); err != nil {
		return nil, err
	}
	// Without syscall.ForkLock: the child never execs, so no descriptor another thread opens
	// meanwhile can outlive it, and a call's start (which holds the lock) must not wait for the
	// mount list being made here.
	start := time.Now()
	pid, errno := rawStart(p)
	setup := time.Since(start)
	if errno != 0 {
		return nil, fmt.Errorf("clone: %w", errno)
	}
	stW.Close()
	var ws unix.WaitStatus
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			break
		}
	}
	status := make([]byte, 16)
	n, _ := stR.Read(status)
	if p.stuck(setup, ws, status[:n]) {
		return nil, stuckFailure(name, p)
	}
	if err := setupFailure(name, p, status[:n]); err != nil {
		return nil, err
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return nil, fmt.Errorf("the preparing child ended with %v", ws)
	}
	buf, oob := make([]byte, 1), make([]byte, unix.CmsgSpace(4))
	_, oobn, _, _, err := unix.Recvmsg(int(recv.Fd()), buf, oob, unix.MSG_DONTWAIT|unix.MSG_CMSG_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("receive the prepared mount namespace: %w", err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) != 1 {
		return nil, errors.New("receive the prepared mount namespace: no descriptor")
	}
	fds, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(fds) != 1 {
		for _, fd := range fds {
			unix.Close(fd)
		}
		return nil, errors.New("receive the prepared mount namespace: no descriptor")
	}
	ns := os.NewFile(uintptr(fds[0]), "mntns")
	// never serve's own
	var a, b unix.Stat_t
	if unix.Fstat(fds[0], &a) != nil || unix.Stat("/proc/thread-self/ns/mnt", &b) != nil || a.Ino == b.Ino && a.Dev == b.Dev {
		ns.Close()
		return nil, errors.New("the prepared mount namespace is serve's own")
	}
	return ns, nil
}
