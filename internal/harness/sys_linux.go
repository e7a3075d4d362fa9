package harness

import (
	"fmt"
	"runtime"
	"syscall"
)

// TraceSibling ptrace-attaches the arena's sibling from the harness, outside any sandbox, and
// keeps it attached until Close: the attack ptrace-parent stands for, made where nothing stops
// it (the sibling detector's control).
func (a *Arena) TraceSibling() error {
	pid := a.SiblingPID()
	if pid == 0 {
		return fmt.Errorf("no sibling process to trace")
	}
	errc := make(chan error, 1)
	release := make(chan struct{})
	go func() {
		// ptrace binds the tracer to this thread; it ends with the goroutine (never unlocked),
		// which detaches the tracee if Detach was not reached.
		runtime.LockOSThread()
		if err := syscall.PtraceAttach(pid); err != nil {
			errc <- fmt.Errorf("ptrace attach %d: %w", pid, err)
			return
		}
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0x40000000 /* __WALL */, nil)
		errc <- nil
		<-release
		syscall.PtraceDetach(pid)
	}()
	a.closers = append(a.closers, func() { close(release) })
	return <-errc
}

// serveAttr ends the arena's serve with its harness: a harness (or verify) killed outright
// (SIGKILL, an OOM kill) runs no closer, and its serve would go on running, over HTTP listening,
// for as long as the machine does. SIGTERM is serve's orderly end (its calls' sandboxes and
// containers removed). The signal follows the thread that started serve: Go ends a thread only
// with a goroutine locked to it, and none here starts a serve.
func serveAttr() *syscall.SysProcAttr {
	if mutated("harness-serve-orphaned") {
		return nil
	}
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
