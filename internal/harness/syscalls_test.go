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

// trial36 F9: a probe the policy's own deny_args refused (python's -c) is an ERROR that says so,
// and that a deny_args is no containment. Red without it (mutant policy-fix-generic).
func TestSyscallProbeStoppedByDenyArgs(t *testing.T) {
	a := &Arena{}
	a.StageOutput("refused by rule allowlist.commands[python].deny_args: -c matches \"-c\"")
	r := &run{a: a}
	checkSyscalls(r)
	if len(r.unsure) != 1 || !strings.Contains(r.unsure[0], "the policy's own deny_args stopped the probe") {
		t.Errorf("inconclusive: %q", r.unsure)
	}
}
