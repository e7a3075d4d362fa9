package sandbox

// The code in this file runs in the child of the direct start's vfork (see rawexec_linux.go),
// between clone and exec, in the parent's memory and on its goroutine's stack: no allocation,
// no stack growth, no locks, no writes the parent reads (but the plan's step), only raw system
// calls on what the plan (rawexec_linux.go, in the parent, before the fork) prepared. It is kept apart from the
// planning code so that what must obey those rules is one short file, read with them in mind.

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

//go:linkname runtimeBeforeFork syscall.runtime_BeforeFork
func runtimeBeforeFork()

//go:linkname runtimeAfterFork syscall.runtime_AfterFork
func runtimeAfterFork()

//go:linkname runtimeAfterForkInChild syscall.runtime_AfterForkInChild
func runtimeAfterForkInChild()

// closeRangeCloexec is CLOSE_RANGE_CLOEXEC (linux/close_range.h).
const closeRangeCloexec = 1 << 2

// atFDCWD is AT_FDCWD (-100) as a system call argument.
var atFDCWD = func() uintptr { v := unix.AT_FDCWD; return uintptr(v) }()

// rawStart starts the child: fork (sharing memory until the exec, as os/exec does) and, in
// the child, apply the plan and exec.
func rawStart(p *rawPlan) (int, syscall.Errno) {
	p.armDeadline()
	p.c3 = cloneArgs{}
	if !noClone3.Load() {
		p.c3 = cloneArgs{flags: uint64(p.flags|syscall.CLONE_VM|syscall.CLONE_VFORK) | cloneClearSighand, exitSignal: uint64(syscall.SIGCHLD)}
	}
	p.clone3Unsupported = false
	pid, errno := rawChild(p) // calls runtimeBeforeFork after its own stack check
	runtimeAfterFork()
	if p.clone3Unsupported && errno == 0 {
		noClone3.Store(true) // clone worked where clone3 did not: the kernel's, not this call's
	}
	return int(pid), errno
}

// sysClone3 is clone3's number (Linux 5.3; the same on every architecture that has it).
const sysClone3 = 435

// emptySigset is the signal mask a command starts with: nothing blocked.
var emptySigset uint64

// rawChild is the child's whole life between clone and exec. The child runs on this goroutine's
// stack in the parent's memory (CLONE_VM|CLONE_VFORK; the parent waits until the exec) with only
// this thread: no allocation, no stack growth, no locks, no writes the parent reads (but the
// plan's step, read once the child is gone), only raw system calls on what the parent prepared (runtimeBeforeFork makes any stack growth fatal, so a
// mistake here is loud, not silent). In the parent it returns at once, with what rawVforkSyscall
// returned after the child was gone.
//
//go:norace
//go:nocheckptr
//go:noinline
func rawChild(p *rawPlan) (uintptr, syscall.Errno) {
	var (
		err syscall.Errno
		fd  uintptr
		i   int
		op  *rawOp
		msg [2]int32
	)
	runtimeBeforeFork() // from here: no allocation, no stack growth, signals blocked
	pid, errno := ^uintptr(0), uintptr(syscall.ENOSYS)
	if p.c3.flags != 0 {
		pid, errno = rawVforkSyscall(sysClone3, uintptr(unsafe.Pointer(&p.c3)), unsafe.Sizeof(p.c3))
		if errno == uintptr(syscall.ENOSYS) || errno == uintptr(syscall.EINVAL) || errno == uintptr(syscall.E2BIG) || errno == uintptr(syscall.EPERM) {
			p.c3.flags = 0 // no child: made by clone below (and noClone3 set if that works)
			p.clone3Unsupported = true
		}
	}
	if p.c3.flags == 0 {
		pid, errno = rawVforkSyscall(syscall.SYS_CLONE, p.flags|syscall.CLONE_VM|syscall.CLONE_VFORK|uintptr(syscall.SIGCHLD), 0)
	}
	if errno != 0 || pid != 0 {
		return pid, syscall.Errno(errno)
	}
	// The child.
	if p.c3.flags != 0 {
		// The kernel reset every handled signal to its default at the clone (ignored ones stay
		// ignored, as the runtime's reset leaves them): only the mask is left to undo.
		syscall.RawSyscall6(syscall.SYS_RT_SIGPROCMASK, unix.SIG_SETMASK, uintptr(unsafe.Pointer(&emptySigset)), 0, 8, 0, 0)
	} else {
		runtimeAfterForkInChild()
	}
	if !p.noDeadline {
		// First: whatever follows may block on what it is given (rawPlan.deadline says why
		// that must not last).
		p.step = stDeadline
		if _, _, err = syscall.RawSyscall(syscall.SYS_TIMER_CREATE, unix.CLOCK_MONOTONIC,
			uintptr(unsafe.Pointer(&p.deadlineEv)), uintptr(unsafe.Pointer(&p.timerID))); err != 0 {
			goto fail
		}
		if _, _, err = syscall.RawSyscall6(syscall.SYS_TIMER_SETTIME, uintptr(p.timerID), 0,
			uintptr(unsafe.Pointer(&p.deadline)), 0, 0, 0); err != 0 {
			goto fail
		}
	}
	for i = 0; i < len(p.idMaps); i++ {
		// A new user namespace (a serve that is not root): serve's uid and gid mapped onto
		// themselves, written by the child, which holds every capability in its namespace until
		// its exec (the kernel clears them at the exec of a uid that is not 0; none is ambient).
		p.step = stUserNS
		if fd, _, err = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p.idMaps[i].path)),
			syscall.O_WRONLY|syscall.O_CLOEXEC, 0, 0, 0); err != 0 {
			goto fail
		}
		_, _, err = syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&p.idMaps[i].data[0])), uintptr(len(p.idMaps[i].data)))
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
		if err != 0 {
			goto fail
		}
	}
	if p.prepare {
		goto mounts // a mount namespace made ahead of a call: nothing but its mount list
	}
	p.step = stSetpgid
	if _, _, err = syscall.RawSyscall(syscall.SYS_SETPGID, 0, 0, 0); err != 0 {
		goto fail
	}
	// Namespaces made for this call ahead of it, in place of CLONE_NEWNET, CLONE_NEWIPC and
	// CLONE_NEWUTS (netns_linux.go).
	p.step = stNetNS
	if p.netns >= 0 {
		if _, _, err = syscall.RawSyscall(unix.SYS_SETNS, uintptr(p.netns), syscall.CLONE_NEWNET, 0); err != 0 {
			goto fail
		}
	}
	if p.ipcns >= 0 {
		if _, _, err = syscall.RawSyscall(unix.SYS_SETNS, uintptr(p.ipcns), syscall.CLONE_NEWIPC, 0); err != 0 {
			goto fail
		}
	}
	if p.utsns >= 0 {
		if _, _, err = syscall.RawSyscall(unix.SYS_SETNS, uintptr(p.utsns), syscall.CLONE_NEWUTS, 0); err != 0 {
			goto fail
		}
	}
	p.step = stStdio
	if _, _, err = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(p.stdin), 0, 0); err != 0 {
		goto fail
	}
	if _, _, err = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(p.stdout), 1, 0); err != 0 {
		goto fail
	}
	if _, _, err = syscall.RawSyscall(syscall.SYS_DUP3, uintptr(p.stderr), 2, 0); err != 0 {
		goto fail
	}
	// Every other descriptor closes at the exec, also any serve inherited from whoever started
	// it without close-on-exec (Go marks only its own). Best effort: kernels before 5.11 lack it.
	if p.closeFDs {
		syscall.RawSyscall(unix.SYS_CLOSE_RANGE, 3, 0xffffffff, closeRangeCloexec)
	}
	if p.mntns >= 0 {
		// The call's mount namespace, made ahead of it with this call's mount list and never
		// entered before (mntns_linux.go), in place of CLONE_NEWNS and the list.
		p.step = stMntNS
		if _, _, err = syscall.RawSyscall(unix.SYS_SETNS, uintptr(p.mntns), syscall.CLONE_NEWNS, 0); err != 0 {
			goto fail
		}
	}
mounts:
	if p.mounts && p.mntns < 0 {
		p.step = stMountPrivate
		if _, _, err = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(p.empty)), uintptr(unsafe.Pointer(p.ops[0].dst)),
			uintptr(unsafe.Pointer(p.empty)), syscall.MS_REC|syscall.MS_PRIVATE, 0, 0); err != 0 {
			goto fail
		}
		for i = 1; i < len(p.ops); i++ {
			op = &p.ops[i]
			p.step = stOps + op.label
			switch op.kind {
			case opMount:
				_, _, err = syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(op.src)), uintptr(unsafe.Pointer(op.dst)),
					uintptr(unsafe.Pointer(op.fstype)), op.flags, uintptr(unsafe.Pointer(op.data)), 0)
				if err == syscall.ENOENT && op.skip {
					i++
					err = 0
				}
				if err == syscall.ENOENT && op.ignoreENOENT {
					err = 0
				}
			case opMkdir:
				_, _, err = syscall.RawSyscall(syscall.SYS_MKDIRAT, atFDCWD, uintptr(unsafe.Pointer(op.dst)), 0o755)
				if err == syscall.EEXIST {
					err = 0
				}
			case opCreat:
				// mknod, not open(O_CREAT): an open of what is already there (a FIFO) can wait.
				_, _, err = syscall.RawSyscall6(syscall.SYS_MKNODAT, atFDCWD, uintptr(unsafe.Pointer(op.dst)),
					syscall.S_IFREG|0o644, 0, 0, 0)
				if err == syscall.EEXIST {
					err = 0
				}
			case opClose:
				syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(op.fd), 0, 0)
			case opOpenPath:
				fd, _, err = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(op.dst)), unix.O_PATH|syscall.O_CLOEXEC, 0, 0, 0)
				if err == 0 && fd != uintptr(op.fd) { // the lowest free number may be the one wanted
					_, _, err = syscall.RawSyscall(syscall.SYS_DUP3, fd, uintptr(op.fd), syscall.O_CLOEXEC)
					syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
				}
			}
			if err != 0 {
				goto fail
			}
		}
	}
	if p.prepare {
		// Hand this mount namespace to serve, then exit: no process runs in it until its call.
		p.step = stSendNS
		if fd, _, err = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p.nsPath)), syscall.O_RDONLY|syscall.O_CLOEXEC, 0, 0, 0); err != 0 {
			goto fail
		}
		*p.nsRights = int32(fd)
		if _, _, err = syscall.RawSyscall(syscall.SYS_SENDMSG, uintptr(p.sock), uintptr(unsafe.Pointer(p.nsMsg)), 0); err != 0 {
			goto fail
		}
		for {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
	}
	for i = 0; i < len(p.childRules); i++ {
		// The private /tmp and the workspace's layer exist only in this mount namespace: their
		// rules are added here.
		p.step = stTmpRule
		fd, _, err = syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(p.childRules[i])),
			unix.O_PATH|syscall.O_CLOEXEC, 0, 0, 0)
		if err != 0 {
			goto fail
		}
		p.ruleAttr.fd = int32(fd)
		if _, _, err = syscall.RawSyscall6(unix.SYS_LANDLOCK_ADD_RULE, uintptr(p.rulesetFD), 1, // LANDLOCK_RULE_PATH_BENEATH
			uintptr(unsafe.Pointer(&p.ruleAttr)), 0, 0, 0); err != 0 {
			goto fail
		}
		syscall.RawSyscall(syscall.SYS_CLOSE, fd, 0, 0)
	}
	// Politeness, not a security layer: failure is not reported.
	syscall.RawSyscall(syscall.SYS_SETPRIORITY, syscall.PRIO_PROCESS, 0, uintptr(p.nice))
	p.step = stChdir
	if _, _, err = syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(p.dir)), 0, 0); err != 0 {
		goto fail
	}
	if p.dropUID {
		p.step = stCreds
		if _, _, err = syscall.RawSyscall(syscall.SYS_SETGROUPS, 0, 0, 0); err != 0 {
			goto fail
		}
		if _, _, err = syscall.RawSyscall(syscall.SYS_SETRESGID, p.gid, p.gid, p.gid); err != 0 {
			goto fail
		}
		if _, _, err = syscall.RawSyscall(syscall.SYS_SETRESUID, p.uid, p.uid, p.uid); err != 0 {
			goto fail
		}
	}
	if p.dropCaps {
		// Every capability of the call's user namespace, held since the clone, given up: the
		// mounts are made, and with no_new_privs a file-capped binary gains none at its exec.
		p.step = stDropCaps
		if _, _, err = syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&p.capHdr)), uintptr(unsafe.Pointer(&p.capData[0])), 0); err != 0 {
			goto fail
		}
	}
	// After the credential change, which clears it: the tree dies with serve.
	p.step = stPdeathsig
	if _, _, err = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0); err != 0 {
		goto fail
	}
	if p.noNewPrivs {
		p.step = stNoNewPrivs
		if _, _, err = syscall.RawSyscall6(syscall.SYS_PRCTL, unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0, 0); err != 0 {
			goto fail
		}
	}
	if len(p.idMaps) == 0 {
		// The memory is serve's (CLONE_VM): after the drop to the sandbox uid, no process of
		// that uid may trace this child and read it. The mark is the shared memory's, so serve
		// stays undumpable too. Not in a user namespace: the child keeps serve's uid (whose
		// processes may trace serve itself), and an undumpable serve's /proc files belong to
		// root, so no later child could write its own id maps there, nor serve a helper's.
		p.step = stDumpable
		if _, _, err = syscall.RawSyscall6(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0, 0, 0, 0); err != 0 {
			goto fail
		}
	}
	if p.rulesetFD >= 0 {
		p.step = stLandlock
		if _, _, err = syscall.RawSyscall(unix.SYS_LANDLOCK_RESTRICT_SELF, uintptr(p.rulesetFD), p.rulesetFlags, 0); err != 0 {
			goto fail
		}
	}
	if p.prog != nil {
		p.step = stSeccomp
		if _, _, err = syscall.RawSyscall(syscall.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(p.prog))); err != 0 {
			goto fail
		}
	}
	p.step = stRlimit
	for i = 0; i < len(p.rlim); i++ {
		if _, _, err = syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, p.rlimRes[i], uintptr(unsafe.Pointer(&p.rlim[i])), 0, 0, 0); err != 0 {
			goto fail
		}
	}
	p.step = stExec
	_, _, err = syscall.RawSyscall6(unix.SYS_EXECVEAT, uintptr(p.binFD), uintptr(unsafe.Pointer(p.empty)),
		uintptr(unsafe.Pointer(&p.argv[0])), uintptr(unsafe.Pointer(&p.envp[0])), unix.AT_EMPTY_PATH, 0)
fail:
	msg[0], msg[1] = int32(p.step), int32(err)
	syscall.RawSyscall(syscall.SYS_WRITE, uintptr(p.status), uintptr(unsafe.Pointer(&msg[0])), 8)
	for {
		syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 126, 0, 0)
	}
}
