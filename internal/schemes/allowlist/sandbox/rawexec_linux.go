package sandbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"golang.org/x/sys/unix"
)

// The direct start: a root serve starts a call's command itself, with the exec helper's
// recipe (internal/schemes/allowlist/sandbox/helper) turned into a list of raw system calls that a forked child
// makes between clone and exec, the way the syscall package's ForkExec does. No second Go
// program starts per call: on the 2-CPU VMs this was measured on, the helper's Go runtime
// start-up cost more CPU than the command itself, and a warm helper's start-up competed with
// the running call. Everything that allocates, opens or decides is done in the parent before
// the fork (the Landlock ruleset, the seccomp program, every path as a C string); the child only
// makes system calls on what it was given, and reports a failure as a step number and an errno
// on a close-on-exec pipe (nothing of it can reach the command's output). The helper remains
// for the probe, for serves that are not root (user namespaces need the parent to write the
// child's uid map), and for network host lists (the egress listener is handed over by the
// helper).

// Operations of the mount list.
const (
	opMount    = iota + 1 // mount(src, dst, fstype, flags, data); on ENOENT skip the next op when skip is set
	opMkdir               // mkdir(dst, 0755), EEXIST ignored
	opCreat               // mknod(dst, regular file), EEXIST ignored: a mount point, made without opening anything
	opClose               // close(fd)
	opOpenPath            // open(dst, O_PATH) onto descriptor fd (a fixed number, so a later op can name it)
)

type rawOp struct {
	kind                   int
	src, dst, fstype, data *byte
	flags                  uintptr
	fd                     int
	skip                   bool // opMount: on ENOENT, skip the next op too (the remount of what is not there)
	ignoreENOENT           bool // opMount: on ENOENT, carry on
	label                  int  // index into rawPlan.labels
}

// landlockPathBeneath is struct landlock_path_beneath_attr (packed: the kernel reads 12 bytes).
type landlockPathBeneath struct {
	access uint64
	fd     int32
}

// Failure steps the child reports (index into stepNames; mount ops use their own labels).
const (
	stSetpgid = iota
	stStdio
	stMountPrivate
	stTmpRule
	stChdir
	stCreds
	stPdeathsig
	stNoNewPrivs
	stDumpable
	stLandlock
	stSeccomp
	stRlimit
	stExec
	stNetNS
	stMntNS
	stSendNS
	stDeadline
	stUserNS
	stDropCaps
	stOps // + index of the op's label
)

var stepNames = []string{"set the process group", "set up stdin/stdout/stderr", "make mounts private",
	"allow the private /tmp and the workspace's layer in the Landlock ruleset", "enter the workspace", "drop to the sandbox uid",
	"set the parent-death signal", "set no_new_privs", "clear dumpable", "landlock restrict",
	"install the seccomp filter", "set a resource limit", "exec", "enter the call's prepared network, IPC and UTS namespaces",
	"enter the call's prepared mount namespace", "hand the prepared mount namespace to serve",
	"arm the deadline of the sandbox's setup", "map serve's uid and gid in the call's user namespace", "drop the user namespace's capabilities"}

// idMap is one write the child makes to a file of its own /proc/self: a C path and the bytes.
type idMap struct {
	path *byte
	data []byte
}

type rawPlan struct {
	flags uintptr
	netns int // -1: none; else a prepared network namespace the child enters (netns_linux.go)
	ipcns int // -1: none; else a prepared IPC namespace the child enters
	utsns int // -1: none; else a prepared UTS namespace the child enters
	mntns int // -1: none; else a prepared mount namespace the child enters, in place of the mount list (mntns_linux.go)
	// prepare: the child only makes the mount list in a new mount namespace and hands that
	// namespace to serve on sock (SCM_RIGHTS, nsMsg prepared by the parent, the descriptor's
	// number written by the child into nsRights), then exits (mntns_linux.go).
	prepare               bool
	sock                  int
	nsPath                *byte
	nsMsg                 *unix.Msghdr
	nsRights              *int32
	stdin, stdout, stderr int
	status                int // write end of the status pipe (close-on-exec)
	// idMaps: a serve that is not root clones the call's child into a new user namespace, and
	// the child maps serve's own uid and gid there itself (uid_map, "deny" to setgroups,
	// gid_map: the one mapping an unprivileged process may write for itself), so the parent has
	// nothing to write while the vfork holds it. Empty: no user namespace.
	idMaps []idMap
	// dropCaps: the child (in a new user namespace, where it holds every capability) zeroes its
	// capability sets before the exec, so that no_new_privs masks a file-capped binary's (the
	// exec helper's dropCaps; attack round atk26, F1). capHdr and capData are capset's arguments.
	dropCaps     bool
	capHdr       unix.CapUserHeader
	capData      [2]unix.CapUserData
	mounts       bool
	ops          []rawOp
	labels       []string
	childRules   []*byte // paths whose Landlock rule the child adds (its own mounts)
	ruleAttr     landlockPathBeneath
	nice         int
	dir          *byte
	dropUID      bool
	uid, gid     uintptr
	noNewPrivs   bool
	rulesetFD    int // -1: none
	rulesetFlags uintptr
	prog         *unix.SockFprog // nil: none
	rlimRes      []uintptr
	rlim         []unix.Rlimit
	binFD        int
	closeFDs     bool
	empty        *byte
	argv, envp   []*byte
	// The child's deadline, armed by it first thing (rawStart fills these): a POSIX timer that
	// kills it (SIGKILL: not blockable, not ignorable) if it has not exec'd or exited by then;
	// the exec deletes the timer. Serve's thread waits for the child (vfork) holding its Go
	// scheduler slot, and the runtime cannot stop the world without that slot: a child stuck in
	// its setup (an open that waits on a FIFO, say) would freeze every call of serve, not only
	// its own, and nothing in Go could time it out.
	deadlineEv sigevent
	deadline   itimerspec
	timerID    int32 // written by the child, never read
	// step is the child's current step (an index as its report's, stepNames or stOps + label),
	// written by the child before each: what a child its deadline stopped was doing, read by
	// the parent once the child is gone (a vfork shares its memory).
	step       int
	noDeadline bool          // a mutant build's: no timer
	limit      time.Duration // the deadline's delay; 0: childSetupLimit
	// clone3's arguments (rawStart fills them): the child is made with CLONE_CLEAR_SIGHAND, so
	// the kernel resets serve's signal handlers in it at the clone, where the runtime's
	// AfterForkInChild makes one rt_sigaction per signal (about 60) in the child.
	// clone3Unsupported: the kernel refused clone3 or the flag (before 5.5, a seccomp filter
	// that refuses clone3) and the child was made by clone as before.
	c3                cloneArgs
	clone3Unsupported bool
}

// cloneArgs is the kernel's struct clone_args (its first version's fields, 64 bytes).
type cloneArgs struct {
	flags, pidfd, childTID, parentTID, exitSignal, stack, stackSize, tls uint64
}

// cloneClearSighand is CLONE_CLEAR_SIGHAND (linux/sched.h; clone3 only, Linux 5.5).
const cloneClearSighand = 0x100000000

// noClone3: a child made by clone3 was refused here and clone worked: later children are made
// by clone at once.
var noClone3 atomic.Bool

// setupLimit is how long the child has before its deadline.
func (p *rawPlan) setupLimit() time.Duration {
	if p.limit > 0 {
		return p.limit
	}
	return childSetupLimit
}

// errSetupNotLocal: the call's setup looks a path up on a file system that may not answer; the
// exec helper starts it (spawn).
var errSetupNotLocal = errors.New("the call's setup looks up a path on a file system that may not answer")

// childSetupLimit bounds the direct start's child between clone and exec (its setup takes a
// millisecond or two; this is generous for a loaded machine). A variable for the test that
// shows a stuck child killed.
var childSetupLimit = 5 * time.Second

// sigevent is struct sigevent (64 bytes on 64-bit Linux), for timer_create.
type sigevent struct {
	value  uint64
	signo  int32
	notify int32 // SIGEV_SIGNAL is 0
	_      [12]int32
}

// itimerspec is struct itimerspec, for timer_settime.
type itimerspec struct{ interval, value unix.Timespec }

// armDeadline fills the child's deadline (before the fork: the child only passes pointers).
// A child cloned into a new PID namespace (a call's) is that namespace's init, and the kernel
// drops a signal sent to an init from inside its namespace when its action is the default, the
// timer's SIGKILL included: such a child would never be stopped (attack round atk23). It gets
// no timer, and nothing of what a call controls is looked up in it: its mount list is made
// by a child of its own that has one (spawnDirect, newMountNS).
func (p *rawPlan) armDeadline() {
	p.deadlineEv = sigevent{signo: int32(unix.SIGKILL)}
	p.deadline = itimerspec{value: unix.NsecToTimespec(p.setupLimit().Nanoseconds())}
	p.noDeadline = mutated("child-setup-deadline") || p.flags&unix.CLONE_NEWPID != 0
}

// stuck says whether the child was killed by its deadline before its exec: it went on past the
// limit (rawStart returns at the exec or the child's end), left no report, and died by SIGKILL.
func (p *rawPlan) stuck(took time.Duration, ws unix.WaitStatus, status []byte) bool {
	return !p.noDeadline && took >= p.setupLimit() && len(status) == 0 && ws.Signaled() && ws.Signal() == unix.SIGKILL
}

// directOK says whether this executor starts calls directly (see above): a root serve, and one
// that is not root whose calls get a user namespace (the child clones into a new one and maps
// serve's ids there itself), unless that failed for the last calls (userNSRefused).
func (e *Executor) directOK() bool {
	return directArch && (e.dropUID || e.attr.userNS && time.Now().UnixNano() >= e.userNSOffUntil.Load()) &&
		e.egress == nil && !e.viaHelper
}

// errUserNSDirect: the child could not set up its user namespace on this host (a kernel or a
// security module that refuses a vfork's new user namespace, or its own id maps); this call and
// every later one go through the exec helper, which the probe showed works.
var errUserNSDirect = errors.New("a direct start's user namespace is refused on this host")

// idMapDir is where a child finds its own id maps: a variable for the test that shows a refused
// user namespace sent to the exec helper.
var idMapDir = "/proc/self"

// idMapsFor is what a child in a new user namespace writes to map serve's uid and gid.
func idMapsFor(uid, gid int) ([]idMap, error) {
	var out []idMap
	for _, w := range [][2]string{
		{idMapDir + "/uid_map", fmt.Sprintf("%d %d 1\n", uid, uid)},
		{idMapDir + "/setgroups", "deny"},
		{idMapDir + "/gid_map", fmt.Sprintf("%d %d 1\n", gid, gid)},
	} {
		b, err := cstr(w[0])
		if err != nil {
			return nil, err
		}
		out = append(out, idMap{path: b, data: []byte(w[1])})
	}
	return out, nil
}

// enter has the child enter the namespaces prepared for its call (netns_linux.go) in place of
// cloning those kinds.
func (p *rawPlan) enter(ns *callNS) {
	if ns == nil {
		return
	}
	for _, k := range []struct {
		f    *os.File
		flag uintptr
		fd   *int
	}{{ns.net, unix.CLONE_NEWNET, &p.netns}, {ns.ipc, unix.CLONE_NEWIPC, &p.ipcns}, {ns.uts, unix.CLONE_NEWUTS, &p.utsns}} {
		if k.f != nil && p.flags&k.flag != 0 {
			*k.fd, p.flags = int(k.f.Fd()), p.flags&^k.flag
		}
	}
}

// cstr is s as a C string (NUL in s is refused by the caller's checks: paths and argv come
// from the policy and the argument check, which refuse NUL).
func cstr(s string) (*byte, error) { return unix.BytePtrFromString(s) }

// plan turns the spec into the child's list of system calls. The returned cleanup closes what
// the parent opened for the child (after the fork).
func (e *Executor) plan(s *helper.Spec, bin *os.File, stdio [4]int, ns *callNS, pm *preparedMounts) (*rawPlan, func(), error) {
	var closers []func()
	cleanup := func() {
		for _, c := range closers {
			c()
		}
	}
	fail := func(err error) (*rawPlan, func(), error) {
		cleanup()
		return nil, func() {}, err
	}
	p := &rawPlan{flags: e.attr.flags, mounts: s.Mounts, nice: s.Nice, dropUID: s.DropUID && !mutated("drop-uid"),
		uid: uintptr(s.UID), gid: uintptr(s.GID), noNewPrivs: !mutated("no-new-privs"), rulesetFD: -1, binFD: int(bin.Fd()),
		stdin: stdio[0], stdout: stdio[1], stderr: stdio[2], status: stdio[3], closeFDs: !mutated("close-fds"), netns: -1, ipcns: -1, utsns: -1, mntns: -1, sock: -1}
	p.enter(ns)
	if pm != nil && s.Mounts && p.flags&unix.CLONE_NEWNS != 0 {
		p.mntns, p.flags = int(pm.ns.Fd()), p.flags&^unix.CLONE_NEWNS
	}
	var err error
	if p.flags&unix.CLONE_NEWUSER != 0 {
		if p.idMaps, err = idMapsFor(e.attr.uid, e.attr.gid); err != nil {
			return fail(err)
		}
		p.dropCaps = !mutated("drop-caps")
		p.capHdr.Version = unix.LINUX_CAPABILITY_VERSION_3
	}
	if p.empty, err = cstr(""); err != nil {
		return fail(err)
	}
	if p.dir, err = cstr(s.Dir); err != nil {
		return fail(err)
	}
	if p.argv, err = helper.CStrings(s.Argv); err != nil {
		return fail(fmt.Errorf("argv: %w", err))
	}
	if p.envp, err = helper.CStrings(s.Env); err != nil {
		return fail(fmt.Errorf("env: %w", err))
	}
	// Landlock: built here (or with the prepared mount namespace), but the private /tmp is the
	// child's own and gets its rule there.
	rs := rulesetSpec(s)
	var fd, abi int
	var flags uint32
	if p.mntns >= 0 && pm.rulesetFD >= 0 {
		fd, flags, abi = pm.takeRuleset()
	} else if fd, flags, abi, err = helper.Ruleset(&rs); err != nil {
		return fail(err)
	}
	if fd >= 0 {
		closers = append(closers, func() { unix.Close(fd) })
		if !mutated("landlock") {
			p.rulesetFD, p.rulesetFlags = fd, uintptr(flags)
		}
		if p.rulesetFD >= 0 && s.Mounts {
			// The private /tmp and the workspace's layer exist only in the child's mount
			// namespace: their rules are added there, on what the child sees.
			var paths []string
			if len(rs.RWDirs) != len(s.RWDirs) {
				paths = append(paths, "/tmp")
			}
			if s.Overlay != "" {
				paths = append(paths, s.Dir)
			}
			p.ruleAttr.access = helper.WorkspaceAccess(abi)
			for _, q := range paths {
				b, err := cstr(q)
				if err != nil {
					return fail(err)
				}
				p.childRules = append(p.childRules, b)
			}
		}
	}
	prog, err := helper.Filter(s)
	if err != nil {
		return fail(err)
	}
	if prog != nil {
		p.prog = &unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	}
	for _, r := range s.Rlimits {
		p.rlimRes = append(p.rlimRes, uintptr(r.Resource))
		p.rlim = append(p.rlim, unix.Rlimit{Cur: r.Value, Max: r.Value})
	}
	if s.Mounts && p.mntns < 0 {
		if err := e.planMounts(p, s); err != nil {
			return fail(err)
		}
	}
	return p, cleanup, nil
}

// rulesetSpec is spec s as its Landlock ruleset is built from: with a mount namespace, the
// private /tmp is the child's own, and the child adds its rule.
func rulesetSpec(s *helper.Spec) helper.Spec {
	rs := *s
	if s.Mounts {
		rs.RWDirs = nil
		for _, d := range s.RWDirs {
			if d != "/tmp" {
				rs.RWDirs = append(rs.RWDirs, d)
			}
		}
	}
	return rs
}

// planMounts is the helper's privateMounts as a list of system calls: ops[0] names "/" (made
// private by the child first), then the private /tmp, the paths under the host's /tmp the call
// needs bound back on top of it, and the protected paths bound read-only.
func (e *Executor) planMounts(p *rawPlan, s *helper.Spec) error {
	add := func(op rawOp, label string) {
		op.label = len(p.labels)
		p.labels = append(p.labels, label)
		p.ops = append(p.ops, op)
	}
	c := func(s string) *byte {
		b, err := cstr(s)
		if err != nil {
			return nil // paths with NUL never get here: the argument check and policy refuse them
		}
		return b
	}
	// Sized once (what a call's mounts take at most, /tmp's chains aside): grown op by op they
	// were a tenth of what a call allocates.
	tmps, pins, ros := helper.TmpPaths(s), helper.Pinned(s), helper.ROBinds(s)
	n := 4 + 5*len(tmps) + len(pins) + 2*len(ros)
	p.ops, p.labels = slices.Grow(p.ops, n), slices.Grow(p.labels, n)
	add(rawOp{dst: c("/")}, "make mounts private")
	type keep struct {
		path string
		fd   int // the descriptor number the child opens it on, before /tmp is covered
		dir  bool
	}
	var keeps []keep
	// Descriptor numbers above every one the child still needs (the status pipe, the ruleset,
	// the binary): the child's table is its own copy, so whatever serve had there is untouched.
	next := max(p.status, p.rulesetFD, p.binFD, p.stdin, p.stdout, p.stderr, p.netns, p.ipcns, p.utsns, p.mntns, p.sock) + 1
	var paths []string
	var dirs []bool
	for _, q := range tmps {
		var st unix.Stat_t
		if unix.Stat(q, &st) != nil {
			continue // optional paths may be missing
		}
		paths, dirs = append(paths, q), append(dirs, st.Mode&unix.S_IFMT == unix.S_IFDIR)
	}
	for i, q := range paths {
		if !helper.Covered(i, paths, dirs) {
			keeps = append(keeps, keep{q, next, dirs[i]})
			next++
		}
	}
	for _, k := range keeps { // opened in the child's own mount namespace: a bind source must be
		add(rawOp{kind: opOpenPath, dst: c(k.path), fd: k.fd}, "bind "+k.path+" back under the private /tmp")
	}
	if opts, ok := helper.TmpfsOptions(s); ok {
		add(rawOp{kind: opMount, src: c("tmpfs"), dst: c("/tmp"), fstype: c("tmpfs"), flags: unix.MS_NOSUID | unix.MS_NODEV, data: c(opts)},
			"mount a private /tmp")
	}
	made := map[string]bool{"/tmp": true}
	for _, k := range keeps {
		label := "bind " + k.path + " back under the private /tmp"
		dir := k.path
		if !k.dir {
			dir = path.Dir(k.path)
		}
		var chain []string
		for d := dir; d != "/tmp" && d != "/" && !made[d]; d = path.Dir(d) {
			chain = append(chain, d)
		}
		for i := len(chain) - 1; i >= 0; i-- {
			made[chain[i]] = true
			add(rawOp{kind: opMkdir, dst: c(chain[i])}, label)
		}
		if !k.dir {
			add(rawOp{kind: opCreat, dst: c(k.path)}, label)
		}
		add(rawOp{kind: opMount, src: c(fmt.Sprintf("/proc/self/fd/%d", k.fd)), dst: c(k.path), fstype: p.empty, flags: unix.MS_BIND | unix.MS_REC, data: p.empty}, label)
		add(rawOp{kind: opClose, fd: k.fd, dst: p.empty}, label)
	}
	if s.Overlay != "" {
		add(rawOp{kind: opMount, src: c("overlay"), dst: c(s.Dir), fstype: c("overlay"), flags: unix.MS_NOSUID | unix.MS_NODEV, data: c(s.Overlay)},
			"mount the call's workspace layer (overlayfs) on "+s.Dir)
	}
	for _, d := range pins {
		add(rawOp{kind: opMount, src: c(d), dst: c(d), fstype: p.empty, flags: unix.MS_BIND, data: p.empty, ignoreENOENT: true},
			"pin "+d+" in place")
	}
	for _, q := range ros {
		add(rawOp{kind: opMount, src: c(q), dst: c(q), fstype: p.empty, flags: unix.MS_BIND | unix.MS_REC, data: p.empty, skip: true},
			"protect "+q)
		add(rawOp{kind: opMount, src: p.empty, dst: c(q), fstype: p.empty,
			flags: unix.MS_BIND | unix.MS_REMOUNT | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV, data: p.empty}, "protect "+q+" read-only")
	}
	for _, op := range p.ops {
		if op.dst == nil || (op.kind == opMount && (op.src == nil || op.data == nil)) {
			return errors.New("a path for the call's mounts contains a NUL byte")
		}
	}
	return nil
}

// spawnFDs are the descriptors one direct spawn holds around rawStart: the child's stdin
// (/dev/null), the stdout, stderr and status pipes, and the prepared network namespace (nil when
// none was ready). spawnDirect defers close in its own frame, so each lives exactly as long as
// the call.
//
// Only the read ends are *os.File (serve reads them through the poller); /dev/null and the
// write ends are plain descriptors the child dup2s, which os.File would make pollable and then
// blocking again when asked for its descriptor: about twenty system calls a call, for nothing.
type spawnFDs struct {
	devnull int
	r       [3]*os.File // stdout, stderr, status
	w       [3]int      // -1 once closed
	netns   *callNS
}

// openSpawnFDs opens /dev/null and the three pipes, then takes the call's network namespace.
// On an error what it opened is closed and no namespace is taken.
func (e *Executor) openSpawnFDs() (*spawnFDs, error) {
	f := &spawnFDs{devnull: -1, w: [3]int{-1, -1, -1}}
	var err error
	if f.devnull, err = unix.Open(os.DevNull, unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return nil, &os.PathError{Op: "open", Path: os.DevNull, Err: err}
	}
	for i := range f.r {
		var p [2]int
		if err = unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
			f.close()
			return nil, fmt.Errorf("pipe: %w", err)
		}
		// The read end only is non-blocking (the status of a separate open file description):
		// NewFile then puts it in the poller; the child's write end stays blocking.
		if _, err = unix.FcntlInt(uintptr(p[0]), unix.F_SETFL, unix.O_NONBLOCK); err != nil {
			unix.Close(p[0])
			unix.Close(p[1])
			f.close()
			return nil, fmt.Errorf("pipe: %w", err)
		}
		f.r[i], f.w[i] = os.NewFile(uintptr(p[0]), "|0"), p[1]
	}
	f.netns = e.takeNetNS()
	return f, nil
}

// stdio is the child's stdin, stdout, stderr and status descriptors, as plan takes them.
func (f *spawnFDs) stdio() [4]int {
	return [4]int{f.devnull, f.w[0], f.w[1], f.w[2]}
}

// closeWriteEnds closes serve's copies of the pipes' write ends once the child holds its own, so
// that the read ends see EOF when the child (and whatever inherited them) is gone.
func (f *spawnFDs) closeWriteEnds() {
	for i := range f.w {
		if f.w[i] >= 0 {
			unix.Close(f.w[i])
			f.w[i] = -1
		}
	}
}

// close closes every descriptor still open: the network namespace (the call's namespace lives
// on while its processes do, never reused), the pipes, /dev/null.
func (f *spawnFDs) close() {
	if f.netns != nil {
		f.netns.Close()
	}
	for i := range f.r {
		if f.r[i] != nil {
			f.r[i].Close()
		}
	}
	f.closeWriteEnds()
	if f.devnull >= 0 {
		unix.Close(f.devnull)
	}
}

// spawnDirect runs one call through rawStart: serve's own pipes carry the output, serve waits
// for the child, and the child's failure before exec comes back on the status pipe.
func (e *Executor) spawnDirect(ctx context.Context, c executor.Call, pc *pinned, bin *os.File, spec helper.Spec, chk *checked) (*executor.Result, error) {
	var use *preparedMounts
	if pm := chk.prepared(); pm != nil {
		if spec.Mounts && pm.fits(&spec) {
			use = pm
		} else {
			// Closed now, not off the path: the call mounts the same layer itself, and the
			// namespace's overlay on it goes with this close.
			pm.ns.Close()
		}
	}
	if use == nil && !mutated("mounts-in-init-child") && !e.mountListLocal(&spec) {
		// None made ahead, and the call's setup looks a path up on a file system that may not
		// answer (network, FUSE: waits that only SIGKILL ends). Not here: the call's child is
		// its PID namespace's init, which no deadline stops (the kernel drops the timer's
		// SIGKILL), and a child made by serve's vfork holds serve's scheduler slot while it
		// waits, so even one with a deadline stalls serve's garbage collection, every session
		// with it, until the deadline (attack round atk23, F1 and F2). The exec helper makes it
		// instead: a process of its own, which serve kills from outside at the setup's deadline.
		if !(spec.Mounts && e.attr.has(unix.CLONE_NEWNS) && mutated("setup-nonlocal-in-serve")) {
			return nil, errSetupNotLocal
		}
		ns, err := e.newMountNS(&spec, pc.Name, childSetupLimit)
		if err != nil {
			return nil, err
		}
		defer e.after.later(func() { ns.Close() })
		use = &preparedMounts{ns: ns, rulesetFD: -1}
	}
	fds, err := e.openSpawnFDs()
	if err != nil {
		return nil, err
	}
	defer fds.close()
	outR, errR, stR := fds.r[0], fds.r[1], fds.r[2]
	p, cleanup, err := e.plan(&spec, bin, fds.stdio(), fds.netns, use)
	if err != nil {
		return nil, fmt.Errorf("prepare the sandbox: %w", err)
	}
	defer cleanup()
	start := time.Now()
	syscall.ForkLock.Lock()
	forked := time.Now() // the wait for the lock is no part of the child's setup (stuck)
	pid, errno := rawStart(p)
	syscall.ForkLock.Unlock()
	setup := time.Since(forked)
	fds.closeWriteEnds()
	if errno != 0 {
		if len(p.idMaps) > 0 && (errno == unix.EINVAL || errno == unix.EPERM) {
			return nil, e.userNSRefused(fmt.Errorf("clone: %w", errno))
		}
		return nil, fmt.Errorf("start the command: clone: %w", errno)
	}
	if p.mounts && p.mntns < 0 {
		// Hold the call's mount namespace, so that its teardown (unmounting the private /tmp)
		// happens at this descriptor's close, off the call's path, not in the exit before wait
		// returns (as the helper path does). A prepared one is held by its descriptor, which
		// the call's layer closes off the path (inLayer).
		if ns, err := os.Open(fmt.Sprintf("/proc/%d/ns/mnt", pid)); err == nil {
			defer e.after.later(func() { ns.Close() })
		}
	}
	stdout, stderr := &executor.CapBuffer{Limit: c.MaxOutput}, &executor.CapBuffer{Limit: c.MaxOutput}
	var copying sync.WaitGroup
	copying.Add(2)
	go func() { defer copying.Done(); io.Copy(stdout, outR) }()
	go func() { defer copying.Done(); io.Copy(stderr, errR) }()
	status, _ := io.ReadAll(stR) // EOF at the exec (close-on-exec) or the child's exit
	ws, held := e.waitChild(ctx, pid)
	// What the next call takes ready (its mount namespace, its network namespace), made once this
	// call's answer is out: made while the command ran, it took the CPU the command needed; made
	// as it exited, the CPU the call's end needed. One after the other, on one goroutine.
	mounts := p.mounts && chk != nil && len(chk.hidden) == 0
	e.after.later(func() {
		if mounts {
			e.prepareMounts(spec)
		}
		e.prepareNetNS()
	})
	drainCopies(&copying, outR, errR)
	if held {
		return nil, heldError(pc.Name)
	}
	if err := e.setupOutcome(pc.Name, p, setup, ws, status); err != nil {
		return nil, err
	}
	res := &executor.Result{
		Stdout: stdout.String(), Stderr: stderr.String(),
		Truncated:  stdout.Dropped() > 0 || stderr.Dropped() > 0,
		TimedOut:   errors.Is(ctx.Err(), context.DeadlineExceeded),
		DurationMS: time.Since(start).Milliseconds(),
	}
	if ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
	} else {
		res.ExitCode = ws.ExitStatus()
	}
	return res, nil
}

// setupOutcome is the error of a direct start whose child did not reach its command (nil: it
// did): its deadline stopped it, its user namespace failed (userNSRefused: the call goes to the
// exec helper), or it reported the step that failed.
func (e *Executor) setupOutcome(name string, p *rawPlan, setup time.Duration, ws unix.WaitStatus, status []byte) error {
	if p.stuck(setup, ws, status) {
		return stuckFailure(name, p)
	}
	if len(p.idMaps) > 0 && len(status) == 8 && int(int32(binary.NativeEndian.Uint32(status))) == stUserNS {
		return e.userNSRefused(setupFailure(name, p, status))
	}
	if err := setupFailure(name, p, status); err != nil {
		return err
	}
	if len(p.idMaps) > 0 {
		e.userNSFails.Store(0) // a direct start that works: a failure before it was not the host's
	}
	return nil
}

// userNSRefused sends a call whose child could not clone or map its user namespace to the exec
// helper, and after userNSFailsMax such calls in a row turns direct starts off for
// userNSOffFor, saying so in serve's log: a host that refuses it (a kernel or security module
// that refuses a vfork's new user namespace) then costs one failed start a minute, and one
// failure (a process of serve's uid that wrote the child's id maps first, attack round atk26,
// F2; a descriptor limit) turns nothing off.
func (e *Executor) userNSRefused(why error) error {
	if e.userNSFails.Add(1) >= userNSFailsMax {
		e.userNSFails.Store(0)
		e.userNSOffUntil.Store(time.Now().Add(userNSOffFor).UnixNano())
		e.log.Warn("calls go through the exec helper for a while: this host refused a direct start's user namespace "+
			"for several calls in a row", "err", why, "for", userNSOffFor)
	}
	return errUserNSDirect
}

// userNSFailsMax and userNSOffFor: see userNSRefused.
const (
	userNSFailsMax = 3
	userNSOffFor   = time.Minute
)

// waitChild reaps the direct child pid, killing its process group and it when ctx ends first,
// then sweeps anything left in the group.
func (e *Executor) waitChild(ctx context.Context, pid int) (ws unix.WaitStatus, held bool) {
	done := make(chan unix.WaitStatus, 1)
	go func() { done <- reap(pid) }()
	select {
	case ws = <-done:
	case <-ctx.Done():
		groupKill(pid)
		_ = unix.Kill(pid, unix.SIGKILL)
		ws, held = reapWithin(e, done) // one the kernel holds is left to end in the background
	}
	groupKill(pid) // sweep anything left in the process group
	return ws, held
}

// reap waits for the direct child pid to end and reaps it. Through a pidfd in Go's poller where
// the kernel has them (5.3): the waiting goroutine parks, where a wait4 that blocks would hold a
// thread in the kernel, whose processor the runtime then takes back and hands over again, and
// whose monitor then wakes every 20 µs while the command runs, on the command's CPU.
func reap(pid int) unix.WaitStatus {
	var ws unix.WaitStatus
	if fd, err := unix.PidfdOpen(pid, unix.PIDFD_NONBLOCK); err == nil {
		f := os.NewFile(uintptr(fd), "pidfd")
		defer f.Close()
		if rc, err := f.SyscallConn(); err == nil {
			for {
				var got int
				var werr error
				// Read's callback runs when the pidfd is readable (the process ended), and first
				// once straight away: wait4 without waiting says whether that has happened.
				err := rc.Read(func(uintptr) bool {
					got, werr = unix.Wait4(pid, &ws, unix.WNOHANG, nil)
					return !(werr == nil && got == 0) && werr != unix.EINTR
				})
				if err == nil && werr == nil && got == pid {
					return ws
				}
				if err != nil || werr != nil {
					break // not through the poller after all: wait4 below says what is left
				}
			}
		}
	}
	for {
		if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
			return ws
		}
	}
}

// drainCopies waits for the output copies to finish; a descendant that escaped the group and
// holds the pipes open must not hang the call, so after a grace period the read ends are closed.
func drainCopies(copying *sync.WaitGroup, outR, errR *os.File) {
	copied := make(chan struct{})
	go func() { copying.Wait(); close(copied) }()
	select {
	case <-copied:
	case <-time.After(250 * time.Millisecond):
		outR.Close()
		errR.Close()
		<-copied
	}
}

// localFS are the file systems whose lookups wait on nothing but the kernel and a local disk
// (mountinfo's names). A mount list whose paths are all on them is made by the call's own
// child (mountListLocal); FUSE, network file systems and autofs are not among them.
var localFS = map[string]bool{
	"ext2": true, "ext3": true, "ext4": true, "xfs": true, "btrfs": true, "f2fs": true, "zfs": true,
	"bcachefs": true, "tmpfs": true, "ramfs": true, "devtmpfs": true, "overlay": true, "squashfs": true,
	"iso9660": true, "udf": true, "vfat": true, "msdos": true, "exfat": true, "ntfs": true, "ntfs3": true,
	"nilfs2": true, "reiserfs": true, "jfs": true, "proc": true, "sysfs": true, "devpts": true,
	"mqueue": true, "cgroup": true, "cgroup2": true, "nsfs": true, "bpf": true, "tracefs": true,
	"debugfs": true, "securityfs": true, "pstore": true, "hugetlbfs": true, "configfs": true,
	"binfmt_misc": true, "efivarfs": true, "fusectl": true,
}

// mountListLocal says whether every path the call's setup looks up (its mount list's, and its
// Landlock rules' paths, which serve opens for the ruleset) lies, with its symbolic links
// followed, on local file systems: serve's mount table (kept, and read again when the kernel says
// it changed) is asked before each component is looked up, so nothing is looked up on a file
// system that may not answer.
func (e *Executor) mountListLocal(s *helper.Spec) bool {
	if mutated("mounts-fs-all-local") {
		return true
	}
	mt, ok := e.mountTable.current()
	if !ok {
		return false
	}
	if mt.allLocal() {
		return true
	}
	seen := make(map[string]bool, 64) // one call's paths share most prefixes: a few dozen
	rs := rulesetSpec(s)
	for _, list := range [][]string{helper.TmpPaths(s), {s.Dir}, helper.Pinned(s), helper.ROBinds(s), rs.ReadDirs, rs.ReadFiles, rs.ExecFiles, rs.DevFiles, rs.RWDirs} {
		for _, p := range list {
			if !mt.localResolved(p, seen) {
				return false
			}
		}
	}
	return true
}

// stuckFailure is the error of a child its deadline killed before its exec: it names the step
// the child was at (attack round atk23: it named none, and pointed at --check, whose probe
// looks up none of the call's paths).
func stuckFailure(name string, p *rawPlan) error {
	return fmt.Errorf("%s could not start: the sandbox's setup did not finish within %s and was stopped; it was at: %s (a path there may be on a file system that does not answer, a network or FUSE mount say)",
		name, p.setupLimit(), p.stepLabel(p.step))
}

// stepLabel says what step (as the child reports it) is.
func (p *rawPlan) stepLabel(step int) string {
	switch {
	case step >= stOps && step-stOps < len(p.labels):
		return p.labels[step-stOps]
	case step >= 0 && step < len(stepNames):
		return stepNames[step]
	}
	return "start"
}

// setupFailure is the error the child's status report names (nil when it reached exec): an
// 8-byte report is the failed step and its errno, anything else non-blank a short report.
func setupFailure(name string, p *rawPlan, status []byte) error {
	if len(status) == 8 {
		step, en := int(int32(binary.NativeEndian.Uint32(status))), syscall.Errno(binary.NativeEndian.Uint32(status[4:]))
		if step == stExec {
			return helperFailure(name, fmt.Sprintf("exec failed: errno %d", int(en)))
		}
		return helperFailure(name, fmt.Sprintf("sandbox setup failed: %s: %v", p.stepLabel(step), en))
	} else if len(bytes.TrimSpace(status)) > 0 {
		return helperFailure(name, "sandbox setup failed: a short report from the child")
	}
	return nil
}
