//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// Prepared network namespaces. Creating a network namespace is the largest kernel cost of a
// call's clone (copy_net_ns: the loopback device, the per-namespace sysctl tables), measured at
// 0.6 ms of a 1.5 ms clone here. A direct start (rawexec_linux.go) therefore takes one made
// ahead of the call, while serve was idle, and the child enters it with setns before anything
// else, instead of cloning a new one.
//
// What is shared and what is fresh (a security decision, docs/perf-allowlist.md): nothing is
// shared. Each prepared namespace is new (unshare on a serve thread that then goes back to
// serve's own), never entered by any process before its call, and used for exactly one call:
// the descriptor is taken out of the pool, given to one child, and closed when the call ends.
// It is what CLONE_NEWNET makes: owned by serve's user namespace, only a loopback device that
// is down, default sysctls. When the pool is empty (calls back to back) the call clones its
// namespace as before; a namespace that cannot be prepared changes nothing but the speed.

// netnsReady holds at most one prepared namespace.
const netnsReady = 1

// prepareNetNS fills the pool in the background; one filler at a time.
func (e *Executor) prepareNetNS() {
	// A serve that is not root makes none: its calls' namespaces belong to each call's own
	// user namespace, which the call's child clones.
	if e.netns == nil || !e.attr.has(unix.CLONE_NEWNET) || e.attr.userNS || e.closed.Load() || !e.netnsFilling.CompareAndSwap(false, true) {
		return
	}
	defer e.netnsFilling.Store(false)
	for len(e.netns) < cap(e.netns) && !e.closed.Load() {
		ns, err := newNetNS()
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

// takeNetNS hands out a prepared namespace for one call (nil: none ready). The next is made
// once the call's command has exited (spawnDirect): made at the take, it competed with the
// call for the CPU (back to back on 2 CPUs, calls took 5 % longer, docs/perf-allowlist.md).
func (e *Executor) takeNetNS() *os.File {
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

// dupNS is another descriptor of the same namespace (for the netns-once mutant only).
func dupNS(ns *os.File) *os.File {
	fd, err := unix.FcntlInt(ns.Fd(), unix.F_DUPFD_CLOEXEC, 3)
	if err != nil {
		return ns
	}
	return os.NewFile(uintptr(fd), ns.Name())
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

// newNetNS makes a network namespace on this thread and brings the thread back to serve's own.
// If the way back fails the thread stays locked, and ends with its goroutine (the runtime does
// not reuse a thread that exits locked): nothing of serve runs in the new namespace.
func newNetNS() (*os.File, error) {
	runtime.LockOSThread()
	own, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("open this thread's network namespace: %w", err)
	}
	defer own.Close()
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		return nil, fmt.Errorf("unshare a network namespace: %w", err)
	}
	ns, err := os.Open("/proc/thread-self/ns/net")
	if rerr := unix.Setns(int(own.Fd()), unix.CLONE_NEWNET); rerr != nil {
		if ns != nil {
			ns.Close()
		}
		return nil, fmt.Errorf("return to serve's network namespace: %w", rerr)
	}
	runtime.UnlockOSThread()
	if err != nil {
		return nil, fmt.Errorf("open the prepared network namespace: %w", err)
	}
	// never serve's own, whatever happened above (own is the namespace this thread left)
	var a, b unix.Stat_t
	if unix.Fstat(int(ns.Fd()), &a) != nil || unix.Fstat(int(own.Fd()), &b) != nil || a.Ino == b.Ino && a.Dev == b.Dev {
		ns.Close()
		return nil, errors.New("the prepared network namespace is serve's own")
	}
	return ns, nil
}
