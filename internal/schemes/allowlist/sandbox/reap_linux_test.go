package sandbox

import (
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
