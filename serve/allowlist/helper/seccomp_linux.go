package helper

import (
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// deniedSyscalls never have a place in an allowlisted command: they inspect or change other
// processes, the kernel, mounts or namespaces. Returning EPERM (not killing) lets programs that
// probe for them carry on.
var deniedSyscalls = []uintptr{
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
	unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT, unix.SYS_UNSHARE, unix.SYS_SETNS,
	unix.SYS_OPEN_TREE, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN, unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY, unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_NAME_TO_HANDLE_AT,
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER, unix.SYS_FANOTIFY_INIT,
	unix.SYS_QUOTACTL, unix.SYS_SYSLOG, unix.SYS_VHANGUP, unix.SYS_SETTIMEOFDAY, unix.SYS_CLOCK_SETTIME,
	unix.SYS_ADJTIMEX, unix.SYS_CLOCK_ADJTIME, unix.SYS_MKNODAT, unix.SYS_PERSONALITY,
}

const cloneNamespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC | unix.CLONE_NEWUSER |
	unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME

// BPF opcodes (linux/filter.h).
const (
	bpfLdWAbs = unix.BPF_LD | unix.BPF_W | unix.BPF_ABS
	bpfJeqK   = unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K
	bpfJgeK   = unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K
	bpfJsetK  = unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K
	bpfRetK   = unix.BPF_RET | unix.BPF_K
)

// seccompFilter builds the program. Labels are resolved by hand because classic BPF only jumps
// forward, by at most 255 instructions.
func seccompFilter(noNetwork bool) ([]unix.SockFilter, error) {
	return seccompFilterNet(noNetwork, false)
}

// seccompFilterNet is seccompFilter where tcpOnly (a host list: egress through serve's proxy)
// narrows the socket() block to TCP sockets (egress_linux.go).
func seccompFilterNet(noNetwork, tcpOnly bool) ([]unix.SockFilter, error) {
	var auditArch uint32
	switch runtime.GOARCH {
	case "amd64":
		auditArch = unix.AUDIT_ARCH_X86_64
	case "arm64":
		auditArch = unix.AUDIT_ARCH_AARCH64
	default:
		return nil, fmt.Errorf("seccomp filter not built for %s", runtime.GOARCH)
	}
	type jump struct {
		at    int
		label string
	}
	var prog []unix.SockFilter
	var jumps []jump
	labels := map[string]int{}
	emit := func(code uint16, k uint32) { prog = append(prog, unix.SockFilter{Code: code, K: k}) }
	jumpTo := func(code uint16, k uint32, label string) { // jump when true, fall through when false
		jumps = append(jumps, jump{len(prog), label})
		emit(code, k)
	}

	emit(bpfLdWAbs, 4) // seccomp_data.arch
	jumps = append(jumps, jump{len(prog), "arch_ok"})
	emit(bpfJeqK, auditArch)
	emit(bpfRetK, unix.SECCOMP_RET_KILL_PROCESS) // a foreign syscall ABI (e.g. int 0x80) is never legitimate
	labels["arch_ok"] = len(prog)
	emit(bpfLdWAbs, 0) // seccomp_data.nr
	if runtime.GOARCH == "amd64" {
		jumpTo(bpfJgeK, 0x40000000, "eperm") // x32 ABI
	}
	for _, nr := range append(deniedSyscalls[:len(deniedSyscalls):len(deniedSyscalls)], archDenied...) {
		jumpTo(bpfJeqK, uint32(nr), "eperm")
	}
	jumpTo(bpfJeqK, unix.SYS_CLONE3, "enosys") // flags live in memory BPF cannot read: make libc fall back to clone
	jumpTo(bpfJeqK, unix.SYS_CLONE, "clone")
	if tcpOnly {
		jumpTo(bpfJeqK, unix.SYS_SOCKET, "socket")
	} else if noNetwork {
		jumpTo(bpfJeqK, unix.SYS_SOCKET, "eacces")
	}
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	labels["clone"] = len(prog)
	emit(bpfLdWAbs, 16) // low 32 bits of args[0] (little endian): the clone flags
	jumpTo(bpfJsetK, cloneNamespaceFlags, "eperm")
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	labels["eperm"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	labels["enosys"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	labels["eacces"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	if tcpOnly {
		labels["socket"] = len(prog)
		emitSocketTCPOnly(emit, jumpTo, labels, func() int { return len(prog) })
	}

	for _, j := range jumps {
		off := labels[j.label] - j.at - 1
		if off < 0 || off > 255 {
			return nil, fmt.Errorf("seccomp: jump to %s out of range (%d)", j.label, off)
		}
		prog[j.at].Jt = uint8(off)
	}
	return prog, nil
}

// installSeccomp loads the filter on the calling thread (no TSYNC: the helper execs from this
// thread, and the filter is inherited across execve). no_new_privs must already be set.
func installSeccomp(prog []unix.SockFilter) error {
	if mutated("seccomp") {
		return nil
	}
	fp := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	_, _, errno := unix.RawSyscall(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, unix.SECCOMP_MODE_FILTER, uintptr(unsafe.Pointer(&fp)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return fmt.Errorf("install seccomp filter: %w", errno)
	}
	return nil
}
