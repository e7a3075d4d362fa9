package sandbox

import (
	"fmt"
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

// A direct start's call runs in network, IPC and UTS namespaces prepared ahead of it (their
// creation off the call's path), and each call in its own: the ones in the pool when the call
// began, never serve's, never the previous call's. Red without the pool (the call's namespace is
// not the prepared one) and with a pool that hands namespaces out twice (mutant netns-once).
func TestPreparedNetNSFreshPerCall(t *testing.T) {
	e := preparingExecutor(t)
	var kinds []string // of net, ipc, uts: those the calls have
	var idx []int
	for i, k := range nsKinds {
		if e.attr.has(k.flag) {
			kinds, idx = append(kinds, k.name), append(idx, i)
		}
	}
	inode := func(path string) uint64 {
		var st unix.Stat_t
		if err := unix.Stat(path, &st); err != nil {
			t.Fatal(err)
		}
		return st.Ino
	}
	held := func(f *os.File) uint64 {
		var st unix.Stat_t
		if err := unix.Fstat(int(f.Fd()), &st); err != nil {
			t.Fatal(err)
		}
		// Held open to the test's end: a freed namespace's inode number is handed out again
		// (the kernel takes the lowest free one), and a later call's fresh namespace would
		// then look like a reused one (it did once in CI).
		fd, err := unix.Dup(int(f.Fd()))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Close(fd) })
		return st.Ino
	}
	prepared := func() []uint64 { // the namespaces in the pool now, left there
		deadline := time.Now().Add(10 * time.Second)
		for len(e.netns) == 0 {
			if time.Now().After(deadline) {
				t.Fatal("no namespaces were prepared ahead of the call")
			}
			time.Sleep(5 * time.Millisecond)
		}
		ns := <-e.netns
		var inos []uint64
		all := []*os.File{ns.net, ns.ipc, ns.uts}
		for _, i := range idx {
			f := all[i]
			if f == nil {
				t.Fatalf("the prepared namespaces are %+v: not every kind of %v", ns, kinds)
			}
			inos = append(inos, held(f))
		}
		e.netns <- ns
		return inos
	}
	call := func() []uint64 {
		res := runPython(t, e, fmt.Sprintf(`import os; print(*(os.stat("/proc/self/ns/"+k).st_ino for k in %q.split()))`, strings.Join(kinds, " ")))
		var inos []uint64
		for _, f := range strings.Fields(res.Stdout) {
			n, err := strconv.ParseUint(f, 10, 64)
			if err != nil {
				t.Fatalf("exit %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			inos = append(inos, n)
		}
		if res.ExitCode != 0 || len(inos) != len(kinds) {
			t.Fatalf("exit %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		return inos
	}
	var own []uint64
	for _, k := range kinds {
		own = append(own, inode("/proc/thread-self/ns/"+k)) // not /proc/self: see serveNS
	}
	seen := map[uint64]int{}
	for i := range 3 {
		want := prepared()
		got := call()
		for k, name := range kinds {
			if got[k] != want[k] {
				t.Errorf("call %d ran in %s namespace %d, not the one prepared for it (%d)", i, name, got[k], want[k])
			}
			if got[k] == own[k] {
				t.Fatalf("call %d ran in serve's own %s namespace", i, name)
			}
			if j, ok := seen[got[k]]; ok {
				t.Errorf("calls %d and %d ran in the same %s namespace %d", j, i, name, got[k])
			}
			seen[got[k]] = i
		}
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

// preparingExecutor is an executor whose calls take network namespaces prepared ahead (a root
// serve's direct start); the test is skipped where there is none.
func preparingExecutor(t *testing.T) *Executor {
	t.Helper()
	if os.Geteuid() != 0 || !directArch {
		t.Skip("the direct start is used by a root serve on amd64 only")
	}
	e := pythonExecutor(t, nil, false)
	if !e.directOK() || !e.attr.has(unix.CLONE_NEWNET) {
		t.Skip("no direct start with a network namespace here")
	}
	return e
}
