package helper

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestSeccompFilterRefusesTerminalInput: in every mode, ioctl TIOCSTI (type into a terminal),
// TIOCLINUX and TIOCSETD are refused whatever the high word of the request; every other ioctl
// (a terminal's attributes, TIOCINQ) is allowed (atk36 F5).
func TestSeccompFilterRefusesTerminalInput(t *testing.T) {
	const arch = unix.AUDIT_ARCH_X86_64
	eperm := uint32(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	for _, mode := range []struct{ noNet, tcpOnly bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		prog, err := seccompFilterNet(mode.noNet, mode.tcpOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name string
			req  uint64
			want uint32
		}{
			{"TIOCSTI", unix.TIOCSTI, eperm},
			{"TIOCSTI with a high word", 1<<32 | unix.TIOCSTI, eperm},
			{"TIOCLINUX", unix.TIOCLINUX, eperm},
			{"TIOCSETD", unix.TIOCSETD, eperm},
			{"TCGETS", unix.TCGETS, unix.SECCOMP_RET_ALLOW},
			{"TIOCGWINSZ", unix.TIOCGWINSZ, unix.SECCOMP_RET_ALLOW},
			{"TIOCINQ", unix.TIOCINQ, unix.SECCOMP_RET_ALLOW},
		} {
			if got := runFilter(t, prog, arch, unix.SYS_IOCTL, 2, c.req); got != c.want {
				t.Errorf("noNetwork=%v tcpOnly=%v: ioctl %s: verdict %#x, want %#x", mode.noNet, mode.tcpOnly, c.name, got, c.want)
			}
		}
	}
}

// ttyChildEnv makes this test binary the child of TestSeccompTIOCSTIRefusedByTheKernel.
const ttyChildEnv = "MCPSANDBOX_TEST_TIOCSTI_CHILD"

// TestSeccompTIOCSTIRefusedByTheKernel installs the filter for real in a child whose
// controlling terminal is a new pseudo-terminal (its stdin): the child's TIOCSTI on it, which
// the kernel lets a process do on its own controlling terminal, is refused with EPERM, and
// nothing reaches the terminal's input.
func TestSeccompTIOCSTIRefusedByTheKernel(t *testing.T) {
	if os.Getenv(ttyChildEnv) == "1" {
		tiocstiChild()
		return
	}
	ptmx, pts, err := openPty()
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer ptmx.Close()
	defer pts.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSeccompTIOCSTIRefusedByTheKernel$", "-test.count=1")
	cmd.Env = append(os.Environ(), ttyChildEnv+"=1")
	cmd.Stdin = pts
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	_ = unix.SetNonblock(int(pts.Fd()), true)
	buf := make([]byte, 64)
	if n, _ := unix.Read(int(pts.Fd()), buf); n > 0 {
		t.Errorf("the child typed %q into its terminal's input", buf[:n])
	}
}

// tiocstiChild: no_new_privs, the filter, then TIOCSTI on the controlling terminal (fd 0).
func tiocstiChild() {
	runtime.LockOSThread()
	prog, err := seccompFilter(true)
	if err == nil {
		err = unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
	}
	if err == nil {
		err = installSeccomp(prog)
	}
	if err != nil {
		os.Stderr.WriteString("install the filter: " + err.Error() + "\n")
		os.Exit(2)
	}
	c := byte('x')
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, 0, unix.TIOCSTI, uintptr(unsafe.Pointer(&c)))
	if !errors.Is(errno, unix.EPERM) {
		os.Stderr.WriteString("TIOCSTI on the controlling terminal: " + errno.Error() + ", want EPERM from the filter\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// openPty opens a new pseudo-terminal pair.
func openPty() (ptmx, pts *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, err
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return nil, nil, err
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		err = errno
		unix.Close(m)
		return nil, nil, err
	}
	return os.NewFile(uintptr(m), "ptmx"), os.NewFile(uintptr(s), "pts"), nil
}
