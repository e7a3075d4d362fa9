package helper

import (
	"cmp"
	"fmt"
	"runtime"
	"slices"
	"unsafe"

	"github.com/mcpsandbox/mcpsandbox/internal/sysdeny"
	"golang.org/x/sys/unix"
)

// deniedSyscalls never have a place in an allowlisted command: they inspect or change other
// processes, the kernel, mounts or namespaces (the list is sysdeny's, shared with the container
// scheme's seccomp profile). Returning EPERM (not killing) lets programs that probe for them
// carry on.
var deniedSyscalls = sysdeny.Numbers()

const cloneNamespaceFlags = sysdeny.CloneNamespaceFlags

// terminalIoctls are the ioctl requests refused with EPERM: input pushed into a terminal
// (TIOCSTI, TIOCLINUX's paste) and a line discipline swapped (TIOCSETD).
var terminalIoctls = []uint32{unix.TIOCSTI, unix.TIOCLINUX, unix.TIOCSETD}

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
	if !mutated("sysdeny-default-deny-new") {
		// Default deny for what the lists were not reviewed against (atk40 F8: open_tree_attr,
		// file_setattr, … reached the kernel past a denylist): a number above the reviewed table
		// answers ENOSYS, as on an older kernel, so libc and programs fall back. The x32 ABI's
		// numbers (0x40000000 and up) are above it too: ENOSYS, as on a kernel without x32.
		jumpTo(bpfJgeK, uint32(sysdeny.ReviewedMax())+1, "enosys")
	} else if runtime.GOARCH == "amd64" {
		jumpTo(bpfJgeK, 0x40000000, "eperm") // x32 ABI
	}
	verdicts := filterVerdicts(noNetwork, tcpOnly)
	if mutated("seccomp-linear") {
		for _, v := range verdicts {
			jumpTo(bpfJeqK, v.nr, v.label)
		}
		emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	} else if err := emitSearch(verdicts, emit, jumpTo, labels, func() int { return len(prog) }); err != nil {
		return nil, err
	}
	labels["clone"] = len(prog)
	emit(bpfLdWAbs, 16) // low 32 bits of args[0] (little endian): the clone flags
	jumpTo(bpfJsetK, cloneNamespaceFlags, "eperm")
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	labels["ioctl"] = len(prog)
	emit(bpfLdWAbs, 24) // low 32 bits of args[1]: the request (the kernel takes an unsigned int)
	for _, req := range terminalIoctls {
		jumpTo(bpfJeqK, req, "eperm")
	}
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	labels["memfd"] = len(prog)
	emit(bpfLdWAbs, 24) // low 32 bits of args[1]: memfd_create's flags
	jumpTo(bpfJsetK, unix.MFD_NOEXEC_SEAL, "allow")
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	labels["allow"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
	labels["eperm"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EPERM))
	labels["enosys"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.ENOSYS))
	labels["eacces"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EACCES))
	labels["eopnotsupp"] = len(prog)
	emit(bpfRetK, unix.SECCOMP_RET_ERRNO|uint32(unix.EOPNOTSUPP))
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

// filterVerdicts are every system call number with a verdict of its own, judged by a search
// tree rather than one comparison after another: the kernel runs the filter on every system call
// number when it installs it (seccomp's cache of always-allowed calls), and a filter that
// reaches its verdict in a dozen steps instead of sixty costs each call's child less to install.
func filterVerdicts(noNetwork, tcpOnly bool) []numVerdict {
	var verdicts []numVerdict
	for _, nr := range append(deniedSyscalls[:len(deniedSyscalls):len(deniedSyscalls)], archDenied...) {
		verdicts = append(verdicts, numVerdict{uint32(nr), "eperm"})
	}
	verdicts = append(verdicts, numVerdict{unix.SYS_CLONE3, "enosys"}, // flags live in memory BPF cannot read: make libc fall back to clone
		numVerdict{unix.SYS_CLONE, "clone"})
	if !mutated("seccomp-fallocate") {
		// fallocate takes disk without writing it: 12-24 GiB of the layers' disk in 0.4 s, far
		// past workspace_quota before its watchdog looks (attack round atk32, F7). EOPNOTSUPP
		// makes posix_fallocate write instead, as on a file system without it.
		verdicts = append(verdicts, numVerdict{unix.SYS_FALLOCATE, "eopnotsupp"})
	}
	if !mutated("seccomp-tiocsti") {
		// a terminal is never the sandbox's to type into: TIOCSTI pushes input the user's shell
		// then runs outside every layer (atk36 F5), TIOCLINUX does the same on a console
		// (selection paste), TIOCSETD swaps the line discipline (old kernel bugs' door)
		verdicts = append(verdicts, numVerdict{unix.SYS_IOCTL, "ioctl"})
	}
	if !mutated("sysdeny-memfd-exec") {
		// A memfd is a file with no path: Landlock does not judge its execution, so exec of
		// /proc/self/fd/N or execveat(AT_EMPTY_PATH) ran any bytes a call held (atk40 F1).
		// memfd_create is allowed only with MFD_NOEXEC_SEAL (never executable, sealed so), the
		// kernel's own vm.memfd_noexec=2 rule, answered EACCES as the kernel does there; a
		// program that needs a data memfd keeps it (before Linux 6.3 the flag is EINVAL).
		verdicts = append(verdicts, numVerdict{unix.SYS_MEMFD_CREATE, "memfd"})
	}
	if tcpOnly {
		verdicts = append(verdicts, numVerdict{unix.SYS_SOCKET, "socket"})
	} else if noNetwork {
		verdicts = append(verdicts, numVerdict{unix.SYS_SOCKET, "eacces"})
	}
	return verdicts
}

// numVerdict is a system call number and the label of its verdict.
type numVerdict struct {
	nr    uint32
	label string
}

// emitSearch emits a binary search over vs (the loaded system call number in A): a number in
// vs jumps to its label, any other number is allowed. Inner nodes split on "nr >= the middle
// number", leaves compare at most three numbers and end in an allow.
func emitSearch(vs []numVerdict, emit func(code uint16, k uint32), jumpTo func(code uint16, k uint32, label string),
	labels map[string]int, at func() int) error {
	vs = slices.Clone(vs)
	slices.SortFunc(vs, func(a, b numVerdict) int { return cmp.Compare(a.nr, b.nr) })
	for i := 1; i < len(vs); i++ {
		if vs[i].nr == vs[i-1].nr && vs[i].label != vs[i-1].label {
			return fmt.Errorf("seccomp: system call %d has two verdicts (%s, %s)", vs[i].nr, vs[i-1].label, vs[i].label)
		}
	}
	vs = slices.CompactFunc(vs, func(a, b numVerdict) bool { return a.nr == b.nr })
	nodes := 0
	var node func(vs []numVerdict)
	node = func(vs []numVerdict) {
		if len(vs) <= 3 {
			for _, v := range vs {
				jumpTo(bpfJeqK, v.nr, v.label)
			}
			emit(bpfRetK, unix.SECCOMP_RET_ALLOW)
			return
		}
		mid := len(vs) / 2
		right := fmt.Sprintf("search%d", nodes)
		nodes++
		jumpTo(bpfJgeK, vs[mid].nr, right)
		node(vs[:mid])
		labels[right] = at()
		node(vs[mid:])
	}
	node(vs)
	return nil
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
