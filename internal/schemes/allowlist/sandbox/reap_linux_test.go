package sandbox

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// reap (through a pidfd in the poller, or wait4) reports how a direct child ended: its exit
// code, the signal that killed it, and a child that ended before reap was called (a zombie).
func TestReapReportsHowTheChildEnded(t *testing.T) {
	start := func(script string) int {
		t.Helper()
		pid, err := syscall.ForkExec("/bin/sh", []string{"sh", "-c", script}, &syscall.ProcAttr{})
		if err != nil {
			t.Fatal(err)
		}
		return pid
	}
	if ws := reap(start("exit 3")); !ws.Exited() || ws.ExitStatus() != 3 {
		t.Errorf("exit 3: got %v", ws)
	}
	sleeper := start("exec sleep 30")
	go func() { time.Sleep(50 * time.Millisecond); _ = unix.Kill(sleeper, unix.SIGKILL) }()
	if ws := reap(sleeper); !ws.Signaled() || ws.Signal() != unix.SIGKILL {
		t.Errorf("killed: got %v", ws)
	}
	pid := start("exit 7")
	time.Sleep(100 * time.Millisecond) // a zombie by now
	if ws := reap(pid); !ws.Exited() || ws.ExitStatus() != 7 {
		t.Errorf("ended before reap: got %v", ws)
	}
	// Reaped: nothing of it is left to wait for.
	if _, err := unix.Wait4(pid, nil, unix.WNOHANG, nil); err != unix.ECHILD {
		t.Errorf("wait4 after reap: %v, want ECHILD", err)
	}
}

// A command starts as a fresh process would, whichever way its child was made: no signal
// blocked, and the same signals ignored, whether the kernel reset serve's handlers at the
// clone (clone3 with CLONE_CLEAR_SIGHAND) or the runtime did in the child (clone, where the
// kernel has no clone3).
func TestCommandStartsWithSignalsAsAFreshProcess(t *testing.T) {
	prog := `
import signal
print("blocked", sorted(int(n) for n in signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print("ignored", [int(n) for n in sorted(signal.valid_signals()) if signal.getsignal(n) == signal.SIG_IGN])`
	status := func(clone3 bool) string {
		t.Helper()
		noClone3.Store(!clone3)
		defer noClone3.Store(false)
		e := pythonExecutor(t, nil, false)
		res := runPython(t, e, prog)
		if clone3 && noClone3.Load() {
			t.Skip("this kernel refuses clone3 with CLONE_CLEAR_SIGHAND: every child is made by clone")
		}
		if !strings.Contains(res.Stdout, "blocked []\n") {
			t.Errorf("clone3=%v: the command starts with signals blocked: %q (stderr %q)", clone3, res.Stdout, res.Stderr)
		}
		return res.Stdout
	}
	if a, b := status(true), status(false); a != b {
		t.Errorf("the command's signals differ by how its child was made:\nclone3: %q\nclone:  %q", a, b)
	}
}
