//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Prepared network namespaces. Creating a network namespace is the largest kernel cost of a
// call's clone (copy_net_ns: the loopback device, the per-namespace sysctl tables), measured at
// 0.6 ms of a 1.5 ms clone here. A direct start (rawexec_linux.go) therefore takes one made
// ahead of the call, while serve was idle, and the child enters it with setns before anything
// else, instead of cloning a new one. The call's IPC and UTS namespaces are made with it, in
// the same unshare, and entered the same way: the IPC one was the next largest part of the
// clone (35-45 µs: its message-queue mount and sysctl tables; entering one costs 5-9 µs).
//
// What is shared and what is fresh (a security decision, docs/perf-allowlist.md): nothing is
// shared. Each prepared namespace is new (unshare on a serve thread that then goes back to
// serve's own), never entered by any process before its call, and used for exactly one call:
// the descriptor is taken out of the pool, given to one child, and closed when the call ends.
// It is what CLONE_NEWNET makes: owned by serve's user namespace, only a loopback device that
// is down, default sysctls; with an IPC namespace holding no object and a UTS namespace with
// serve's host name, as CLONE_NEWIPC and CLONE_NEWUTS make them. When the pool is empty (calls back to back) the call clones its
// namespace as before; a namespace that cannot be prepared changes nothing but the speed.

// netnsReady holds at most one prepared namespace.
const netnsReady = 1

// callNS is the namespaces made for one call ahead of it: the network namespace, and the IPC
// and UTS ones when the call's clone would make them (nil: the clone makes it).
type callNS struct{ net, ipc, uts *os.File }

// Close drops the namespaces (the call's processes keep theirs while they live).
func (c *callNS) Close() {
	for _, f := range []*os.File{c.net, c.ipc, c.uts} {
		if f != nil {
			f.Close()
		}
	}
}

// preparedKinds are the kinds made with the network namespace, of those the call's clone would
// make (e.attr's flags).
func (e *Executor) preparedKinds() uintptr {
	return e.attr.flags & (unix.CLONE_NEWNET | unix.CLONE_NEWIPC | unix.CLONE_NEWUTS)
}

// prepareNetNS fills the pool in the background; one filler at a time.
func (e *Executor) prepareNetNS() {
	// A serve that is not root makes none: its calls' namespaces belong to each call's own
	// user namespace, which the call's child clones.
	if e.netns == nil || !e.attr.has(unix.CLONE_NEWNET) || e.attr.userNS || e.closed.Load() || !e.netnsFilling.CompareAndSwap(false, true) {
		return
	}
	defer e.netnsFilling.Store(false)
	for len(e.netns) < cap(e.netns) && !e.closed.Load() {
		ns, err := newCallNS(e.preparedKinds())
		if err != nil {
			e.log.Warn("could not prepare a network namespace ahead of a call (calls clone their own)", "err", err)
			return
		}
		select {
		case e.netns <- ns:
			if e.closed.Load() {
				e.closeNetNS() // Close ran meanwhile: nothing is left behind
			}
		default:
			ns.Close()
			return
		}
	}
}

// takeNetNS hands out a call's prepared namespaces (nil: none ready). The next is made
// once the call's command has exited (spawnDirect): made at the take, it competed with the
// call for the CPU (back to back on 2 CPUs, calls took 5 % longer, docs/perf-allowlist.md).
func (e *Executor) takeNetNS() *callNS {
	if e.netns == nil || !e.attr.has(unix.CLONE_NEWNET) {
		return nil
	}
	select {
	case ns := <-e.netns:
		if mutated("netns-once") {
			e.netns <- dupNS(ns) // the same namespace again for the next call
		}
		return ns
	default:
		return nil
	}
}

// dupNS is other descriptors of the same namespaces (for the netns-once mutant only).
func dupNS(c *callNS) *callNS {
	dup := func(ns *os.File) *os.File {
		if ns == nil {
			return nil
		}
		fd, err := unix.FcntlInt(ns.Fd(), unix.F_DUPFD_CLOEXEC, 3)
		if err != nil {
			return ns
		}
		return os.NewFile(uintptr(fd), ns.Name())
	}
	return &callNS{net: dup(c.net), ipc: dup(c.ipc), uts: dup(c.uts)}
}

// closeNetNS drops the prepared namespaces (Close).
func (e *Executor) closeNetNS() {
	if e.netns == nil {
		return
	}
	for {
		select {
		case ns := <-e.netns:
			ns.Close()
		default:
			return
		}
	}
}

// nsKinds are the namespaces a call's are prepared of: the flag and /proc's name.
var nsKinds = []struct {
	flag uintptr
	name string
}{{unix.CLONE_NEWNET, "net"}, {unix.CLONE_NEWIPC, "ipc"}, {unix.CLONE_NEWUTS, "uts"}}

// newNetNS makes a network namespace (newCallNS, for tests).
func newNetNS() (*os.File, error) {
	c, err := newCallNS(unix.CLONE_NEWNET)
	if err != nil {
		return nil, err
	}
	return c.net, nil
}

// newCallNS makes the namespaces of kinds (of nsKinds) on this thread, in one unshare, and brings
// the thread back to serve's own. If a way back fails the thread stays locked, and ends with its
// goroutine (the runtime does not reuse a thread that exits locked): nothing of serve runs in a
// new namespace.
func newCallNS(kinds uintptr) (*callNS, error) {
	runtime.LockOSThread()
	var own, made [3]*os.File
	closeAll := func(fs *[3]*os.File) {
		for _, f := range fs {
			if f != nil {
				f.Close()
			}
		}
	}
	defer closeAll(&own)
	for i, k := range nsKinds {
		if kinds&k.flag == 0 {
			continue
		}
		f, err := os.Open("/proc/thread-self/ns/" + k.name)
		if err != nil {
			runtime.UnlockOSThread()
			return nil, fmt.Errorf("open this thread's %s namespace: %w", k.name, err)
		}
		own[i] = f
	}
	if err := unix.Unshare(int(kinds)); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("unshare the call's namespaces: %w", err)
	}
	var err error
	for i, k := range nsKinds {
		if own[i] == nil {
			continue
		}
		if made[i], err = os.Open("/proc/thread-self/ns/" + k.name); err != nil {
			err = fmt.Errorf("open the prepared %s namespace: %w", k.name, err)
			break
		}
	}
	for i, k := range nsKinds { // every kind back, whatever happened above
		if own[i] == nil {
			continue
		}
		if rerr := unix.Setns(int(own[i].Fd()), int(k.flag)); rerr != nil {
			closeAll(&made)
			return nil, fmt.Errorf("return to serve's %s namespace: %w", k.name, rerr)
		}
	}
	runtime.UnlockOSThread()
	if err != nil {
		closeAll(&made)
		return nil, err
	}
	// never serve's own, whatever happened above (own is the namespace this thread left)
	for i, k := range nsKinds {
		if own[i] == nil {
			continue
		}
		var a, b unix.Stat_t
		if unix.Fstat(int(made[i].Fd()), &a) != nil || unix.Fstat(int(own[i].Fd()), &b) != nil || a.Ino == b.Ino && a.Dev == b.Dev {
			closeAll(&made)
			return nil, fmt.Errorf("the prepared %s namespace is serve's own", k.name)
		}
	}
	return &callNS{net: made[0], ipc: made[1], uts: made[2]}, nil
}
