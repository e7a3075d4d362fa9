package sandbox

import (
	"os"
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A warm helper starts at nice 19 (its start-up yields to the running call), and the thread
// that started it gets its own priority back.
func TestWarmHelperStartsIdle(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the idle start is used only by a root serve (the helper must be able to raise its priority back)")
	}
	e := egressExecutor(t, nil)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	tid := unix.Gettid()
	before, err := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if err != nil {
		t.Fatal(err)
	}
	h, err := e.startIdle(64 << 10)
	if err != nil {
		t.Fatal(err)
	}
	defer h.discard()
	after, _ := unix.Getpriority(unix.PRIO_PROCESS, tid)
	if after != before {
		t.Errorf("serve's thread priority %d after starting a warm helper, was %d", 20-after, 20-before)
	}
	nice, err := unix.Getpriority(unix.PRIO_PROCESS, h.cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if 20-nice != 19 {
		t.Errorf("the warm helper runs at nice %d, want 19", 20-nice)
	}
	// Negative control: a helper started the ordinary way has serve's priority.
	h2, err := e.startHelper(64 << 10)
	if err != nil {
		t.Fatal(err)
	}
	defer h2.discard()
	if n, _ := unix.Getpriority(unix.PRIO_PROCESS, h2.cmd.Process.Pid); n != before {
		t.Errorf("control: an ordinary helper runs at nice %d, serve's thread at %d", 20-n, 20-before)
	}
}
