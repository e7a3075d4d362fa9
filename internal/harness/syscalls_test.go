package harness

import (
	"strings"
	"testing"
)

// TestCheckSyscalls: EPERM is seccomp's refusal; any other answer reached a kernel, which is a
// breach when that kernel is the host's, and reported (not a breach) when a runtime puts a
// kernel of its own in between (gVisor answered io_uring_setup with EFAULT itself).
func TestCheckSyscalls(t *testing.T) {
	judge := func(out, ownKernel string) (bool, string) {
		a := &Arena{}
		a.StageOutput(out)
		return checkSyscalls(&run{a: a, expect: Expect{OwnKernel: ownKernel}})
	}
	refused := "SYSCALL bpf -1 1\nSYSCALL io_uring_setup -1 1\n"
	reached := "SYSCALL bpf -1 1\nSYSCALL io_uring_setup -1 14\nSYSCALL unshare_newuser 0 0\n"
	if b, d := judge(refused, ""); b || !strings.Contains(d, "2 syscalls refused") {
		t.Errorf("all EPERM: breach %v, %s", b, d)
	}
	if b, d := judge(reached, ""); !b || !strings.Contains(d, "io_uring_setup reached the kernel (EFAULT)") || !strings.Contains(d, "unshare_newuser succeeded") {
		t.Errorf("host kernel reached: breach %v, %s", b, d)
	}
	if b, d := judge(reached, "gVisor's kernel (runsc)"); b || !strings.Contains(d, "gVisor's kernel (runsc) answers them") || !strings.Contains(d, "io_uring_setup") {
		t.Errorf("a kernel of its own: breach %v, %s", b, d)
	}
}
