package helper

import (
	"encoding/binary"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/sysdeny"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// runFilter executes the seccomp program in x/net/bpf's VM on a seccomp_data for syscall nr with
// arguments args (the first ones), as the kernel would, and returns the filter's verdict.
func runFilter(t *testing.T, prog []unix.SockFilter, arch uint32, nr uint32, args ...uint64) uint32 {
	t.Helper()
	raw := make([]bpf.Instruction, len(prog))
	for i, f := range prog {
		raw[i] = bpf.RawInstruction{Op: f.Code, Jt: f.Jt, Jf: f.Jf, K: f.K}.Disassemble()
	}
	vm, err := bpf.NewVM(raw)
	if err != nil {
		t.Fatalf("the filter is not a valid BPF program: %v", err)
	}
	// struct seccomp_data { int nr; u32 arch; u64 ip; u64 args[6]; } in native (little-endian)
	// order; the VM loads 32-bit words big-endian, so each word is written that way.
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[0:], nr)
	binary.BigEndian.PutUint32(data[4:], arch)
	for i, a := range args {
		binary.BigEndian.PutUint32(data[16+8*i:], uint32(a))       // args[i], low word
		binary.BigEndian.PutUint32(data[16+8*i+4:], uint32(a>>32)) // args[i], high word
	}
	v, err := vm.Run(data)
	if err != nil {
		t.Fatalf("run the filter: %v", err)
	}
	return uint32(v)
}

func TestSeccompFilterVerdicts(t *testing.T) {
	const arch = unix.AUDIT_ARCH_X86_64
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	cases := []struct {
		name      string
		noNetwork bool
		arch      uint32
		nr        uint32
		arg0      uint64
		want      uint32
	}{
		// Spelled out here, not taken from deniedSyscalls, so dropping one from the list fails.
		{"ptrace", true, arch, unix.SYS_PTRACE, 0, eperm},
		{"process_vm_readv", true, arch, unix.SYS_PROCESS_VM_READV, 0, eperm},
		{"mount", true, arch, unix.SYS_MOUNT, 0, eperm},
		{"unshare", true, arch, unix.SYS_UNSHARE, 0, eperm},
		{"setns", true, arch, unix.SYS_SETNS, 0, eperm},
		{"bpf", true, arch, unix.SYS_BPF, 0, eperm},
		{"io_uring_setup", true, arch, unix.SYS_IO_URING_SETUP, 0, eperm},
		{"keyctl", true, arch, unix.SYS_KEYCTL, 0, eperm},
		{"init_module", true, arch, unix.SYS_INIT_MODULE, 0, eperm},
		{"mknod", true, arch, unix.SYS_MKNOD, 0, eperm},
		{"clone3 falls back to clone", true, arch, unix.SYS_CLONE3, 0, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)},
		{"clone of a thread", true, arch, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD, unix.SECCOMP_RET_ALLOW},
		{"clone into a user namespace", true, arch, unix.SYS_CLONE, unix.CLONE_NEWUSER, eperm},
		{"clone into a network namespace", true, arch, unix.SYS_CLONE, unix.CLONE_NEWNET | 17, eperm},
		{"socket without network", true, arch, unix.SYS_SOCKET, unix.AF_INET, unix.SECCOMP_RET_ERRNO | uint32(unix.EACCES)},
		{"socket with network", false, arch, unix.SYS_SOCKET, unix.AF_INET, unix.SECCOMP_RET_ALLOW},
		{"read", true, arch, unix.SYS_READ, 0, unix.SECCOMP_RET_ALLOW},
		{"execve", true, arch, unix.SYS_EXECVE, 0, unix.SECCOMP_RET_ALLOW},
		{"x32 ABI", true, arch, 0x40000000 | unix.SYS_PTRACE, 0, unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)}, // above the reviewed table
		{"i386 ABI (int 0x80)", true, unix.AUDIT_ARCH_I386, 26, 0, unix.SECCOMP_RET_KILL_PROCESS},
	}
	progs := map[bool][]unix.SockFilter{}
	for _, nn := range []bool{true, false} {
		p, err := seccompFilter(nn)
		if err != nil {
			t.Skipf("no filter for this architecture: %v", err)
		}
		progs[nn] = p
	}
	for _, c := range cases {
		if got := runFilter(t, progs[c.noNetwork], c.arch, c.nr, c.arg0); got != c.want {
			t.Errorf("%s: verdict %#x, want %#x", c.name, got, c.want)
		}
	}
	for _, nr := range deniedSyscalls {
		if got := runFilter(t, progs[true], arch, uint32(nr), 0); got != eperm {
			t.Errorf("denied syscall %d: verdict %#x", nr, got)
		}
	}
}

// TestSeccompFilterEveryNumber runs every system call number below 1024, and the x32 ABI's, through
// the filter of each mode: a number on the lists gets its verdict, every other one is allowed
// (the search tree must neither lose a denied number nor deny an allowed one).
func TestSeccompFilterEveryNumber(t *testing.T) {
	const arch = unix.AUDIT_ARCH_X86_64
	allow := uint32(unix.SECCOMP_RET_ALLOW)
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	denied := map[uint32]bool{}
	for _, nr := range append(deniedSyscalls[:len(deniedSyscalls):len(deniedSyscalls)], archDenied...) {
		denied[uint32(nr)] = true
	}
	if len(denied) < 40 {
		t.Fatalf("only %d denied numbers: the list is not what this test expects", len(denied))
	}
	for _, mode := range []struct{ noNet, tcpOnly bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		prog, err := seccompFilterNet(mode.noNet, mode.tcpOnly)
		if err != nil {
			t.Fatal(err)
		}
		for nr := uint32(0); nr < 1024; nr++ {
			want := allow
			switch {
			case denied[nr]:
				want = errno(unix.EPERM)
			case nr > uint32(sysdeny.ReviewedMax()):
				want = errno(unix.ENOSYS) // newer than the review (atk40 F8)
			case nr == unix.SYS_MEMFD_CREATE:
				want = errno(unix.EACCES) // flags zero: no MFD_NOEXEC_SEAL (atk40 F1)
			case nr == unix.SYS_CLONE3:
				want = errno(unix.ENOSYS)
			case nr == unix.SYS_FALLOCATE:
				want = errno(unix.EOPNOTSUPP)
			case nr == unix.SYS_SOCKET && (mode.noNet || mode.tcpOnly):
				want = errno(unix.EACCES) // args zero: domain 0 is neither AF_INET nor AF_INET6
			}
			if got := runFilter(t, prog, arch, nr); got != want {
				t.Errorf("noNetwork=%v tcpOnly=%v: system call %d: verdict %#x, want %#x", mode.noNet, mode.tcpOnly, nr, got, want)
			}
			if got := runFilter(t, prog, arch, 0x40000000|nr); got != errno(unix.ENOSYS) {
				t.Errorf("noNetwork=%v tcpOnly=%v: x32 system call %d: verdict %#x, want ENOSYS", mode.noNet, mode.tcpOnly, nr, got)
			}
		}
	}
}

// TestSeccompFilterShortPaths holds the filter to a search: the longest way through it, over
// every input, is at most 20 instructions. The kernel runs it for every system call number
// when a call's child installs it (seccomp's action cache), so its length is the child's time.
func TestSeccompFilterShortPaths(t *testing.T) {
	prog, err := seccompFilterNet(true, true)
	if err != nil {
		t.Fatal(err)
	}
	// Classic BPF jumps only forward: the longest path from each instruction, from the end.
	longest := make([]int, len(prog)+1)
	for i := len(prog) - 1; i >= 0; i-- {
		ins := prog[i]
		next := func(off int) int {
			if j := i + 1 + off; j <= len(prog) {
				return longest[j]
			}
			return 0
		}
		switch {
		case ins.Code&0x07 == unix.BPF_RET:
			longest[i] = 1
		case ins.Code&0x07 == unix.BPF_JMP && ins.Code&0xf0 == unix.BPF_JA:
			longest[i] = 1 + next(int(ins.K))
		case ins.Code&0x07 == unix.BPF_JMP:
			longest[i] = 1 + max(next(int(ins.Jt)), next(int(ins.Jf)))
		default:
			longest[i] = 1 + next(0)
		}
	}
	if longest[0] > 20 {
		t.Fatalf("the filter's longest path is %d instructions (of %d), want at most 20: the system call number is compared one by one, not searched",
			longest[0], len(prog))
	}
	t.Logf("longest path %d of %d instructions", longest[0], len(prog))
}

// TestSeccompFilterNewAndMemfd (atk40 F8, F1): a system call newer than the reviewed table
// answers ENOSYS (the mount family's newest, open_tree_attr, at the edge, EPERM); memfd_create
// runs only with MFD_NOEXEC_SEAL in its flags, so no memfd is ever executable.
func TestSeccompFilterNewAndMemfd(t *testing.T) {
	const arch = unix.AUDIT_ARCH_X86_64
	errno := func(e unix.Errno) uint32 { return unix.SECCOMP_RET_ERRNO | uint32(e) }
	prog, err := seccompFilter(true)
	if err != nil {
		t.Skipf("no filter for this architecture: %v", err)
	}
	cases := []struct {
		name string
		nr   uint32
		args []uint64
		want uint32
	}{
		{"open_tree_attr", unix.SYS_OPEN_TREE_ATTR, nil, errno(unix.EPERM)},
		{"listmount", unix.SYS_LISTMOUNT, nil, errno(unix.EPERM)},
		{"statmount", unix.SYS_STATMOUNT, nil, errno(unix.EPERM)},
		{"memfd_secret", unix.SYS_MEMFD_SECRET, nil, errno(unix.EPERM)},
		{"file_getattr (6.17)", unix.SYS_FILE_GETATTR, nil, errno(unix.ENOSYS)},
		{"file_setattr (6.17)", unix.SYS_FILE_SETATTR, nil, errno(unix.ENOSYS)},
		{"listns", unix.SYS_LISTNS, nil, errno(unix.ENOSYS)},
		{"a number no kernel has yet", 1000, nil, errno(unix.ENOSYS)},
		{"memfd_create(name, 0)", unix.SYS_MEMFD_CREATE, []uint64{0x1000, 0}, errno(unix.EACCES)},
		{"memfd_create(name, MFD_CLOEXEC)", unix.SYS_MEMFD_CREATE, []uint64{0x1000, unix.MFD_CLOEXEC}, errno(unix.EACCES)},
		{"memfd_create(name, MFD_EXEC)", unix.SYS_MEMFD_CREATE, []uint64{0x1000, unix.MFD_EXEC}, errno(unix.EACCES)},
		{"memfd_create(name, MFD_NOEXEC_SEAL|MFD_CLOEXEC)", unix.SYS_MEMFD_CREATE, []uint64{0x1000, unix.MFD_NOEXEC_SEAL | unix.MFD_CLOEXEC}, unix.SECCOMP_RET_ALLOW},
	}
	for _, c := range cases {
		if got := runFilter(t, prog, arch, c.nr, c.args...); got != c.want {
			t.Errorf("%s: verdict %#x, want %#x", c.name, got, c.want)
		}
	}
}
