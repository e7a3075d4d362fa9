package harness

import (
	"fmt"
	"os/exec"
	"runtime"
	"sync"
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

// startTied starts cmd so that it is sent SIGTERM when the harness ends, even killed outright
// (SIGKILL, an OOM kill: no closer runs), as serve over HTTP would otherwise run on for as long
// as the machine does (trial34). SIGTERM is serve's orderly end (its sandboxes and containers
// removed). The parent-death signal follows the thread that forked, not the process, and Go
// ends a thread when a goroutine locked to it returns (the sibling control's ptrace goroutine
// does, on whatever thread it was given): so cmd is started from a thread of its own that never
// ends (a serve started from another was sent SIGTERM as that control ended, in CI).
func startTied(cmd *exec.Cmd) error {
	if mutated("harness-serve-orphaned") {
		return cmd.Start()
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
	done := make(chan error, 1)
	spawner() <- func() { done <- cmd.Start() }
	return <-done
}

// spawner is a goroutine locked to its thread for the life of the process: what it runs forks
// from a thread that never ends.
var spawner = sync.OnceValue(func() chan<- func() {
	ch := make(chan func())
	go func() {
		runtime.LockOSThread() // never unlocked: no other goroutine runs on this thread, and it never ends
		for f := range ch {
			f()
		}
	}()
	return ch
})
