package sandbox

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A direct start's call runs in a network namespace prepared ahead of it (its creation off the
// call's path), and each call in its own: the one in the pool when the call began, never
// serve's, never the previous call's. Red without the pool (the call's namespace is not the
// prepared one) and with a pool that hands a namespace out twice (mutant netns-once).
func TestPreparedNetNSFreshPerCall(t *testing.T) {
	if os.Geteuid() != 0 || !directArch {
		t.Skip("the direct start is used by a root serve on amd64 only")
	}
	e := pythonExecutor(t, nil, false)
	if !e.directOK() || !e.attr.has(unix.CLONE_NEWNET) {
		t.Skip("no direct start with a network namespace here")
	}
	inode := func(path string) uint64 {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	prepared := func() uint64 { // the namespace in the pool now, left there
		deadline := time.Now().Add(10 * time.Second)
		for len(e.netns) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no network namespace was prepared ahead of the call")
			}
			time.Sleep(5 * time.Millisecond)
		}
		ns := <-e.netns
		var st unix.Stat_t
		if err := unix.Fstat(int(ns.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		// Held open to the test's end: a freed namespace's inode number is handed out again
		// (the kernel takes the lowest free one), and a later call's fresh namespace would
		// then look like a reused one (it did once in CI).
		held, err := unix.Dup(int(ns.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(held) })
		e.netns <- ns
		return st.Ino
	}
	call := func() uint64 {
		res := runPython(t, e, `import os; print(os.stat("/proc/self/ns/net").st_ino)`)
		n, err := strconv.ParseUint(strings.TrimSpace(res.Stdout), 10, 64)
		if res.ExitCode != 0 || err != nil {
			t.Fatalf("exit %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		return n
	}
	own := inode("/proc/thread-self/ns/net") // not /proc/self: see serveNS
	seen := map[uint64]int{}
	for i := range 3 {
		want := prepared()
		got := call()
		if got != want {
			t.Errorf("call %d ran in network namespace %d, not the one prepared for it (%d)", i, got, want)
		}
		if got == own {
			t.Fatalf("call %d ran in serve's own network namespace", i)
		}
		if j, ok := seen[got]; ok {
			t.Errorf("calls %d and %d ran in the same network namespace %d", j, i, got)
		}
		seen[got] = i
	}
}

// serve's own namespace is read right while namespaces are being prepared on its threads, the
// main thread among them (a goroutine locked there moves it, for a moment, into the new one).
// Red when serveNS reads /proc/self (the main thread's).
func TestServeNSWhilePreparing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("preparing a network namespace needs root")
	}
	want, err := serveNS("net")
	if err != nil {
		t.Skip(err)
	}
	if ns, err := newNetNS(); err != nil {
		t.Skip(err)
	} else {
		ns.Close()
	}
	// a bounded number: every namespace made is torn down by the kernel afterwards (cleanup_net,
	// one worker), work that would otherwise compete with the tests running beside this one
	const most = 300
	var made atomic.Int64
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for made.Add(1) <= most {
				if ns, err := newNetNS(); err == nil {
					ns.Close()
				}
			}
		}()
	}
	defer wg.Wait()
	deadline := time.Now().Add(5 * time.Second)
	for n := 0; made.Load() < most && time.Now().Before(deadline); n++ {
		got, err := serveNS("net")
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("read %d: serve's network namespace read as %s, it is %s", n, got, want)
		}
		runtime.Gosched()
	}
}
