package serve

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

// After IdleRelease without a call the memory serve no longer uses goes back to the system:
// garbage a burst of calls left (64 MB here) is released, not kept resident until a collection
// that an idle serve never triggers. Each period of activity is followed by one release.
// idleGarbage is TestIdleReleaseHandsMemoryBack's garbage while it is made.
var idleGarbage [][]byte

func TestIdleReleaseHandsMemoryBack(t *testing.T) {
	old := IdleRelease
	IdleRelease = 30 * time.Millisecond
	defer func() { IdleRelease = old }()
	r := newIdleReleaser()
	defer r.stop()
	// Held in a package variable until it is dropped: held in a local, the compiler may treat
	// the blocks as dead while they are still being made, and the collections the allocations
	// trigger take them back before the idle period (the test failed that way without -race).
	idleGarbage = make([][]byte, 64)
	for i := range idleGarbage {
		idleGarbage[i] = make([]byte, 1<<20)
		idleGarbage[i][0] = 1
	}
	idleGarbage = nil
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	r.busy()
	r.busy()
	time.Sleep(300 * time.Millisecond)
	for deadline := time.Now().Add(5 * time.Second); r.released.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // a loaded machine may run the release late
	}
	if n := r.released.Load(); n != 1 {
		t.Fatalf("released %d times after one idle period, want 1", n)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got := int64(after.HeapReleased) - int64(before.HeapReleased); got < 32<<20 {
		t.Errorf("the heap released %d bytes more after the idle period: the 64 MB of garbage stayed resident", got)
	}
	r.busy()
	// the release after the second idle period, waited for: a loaded machine (CI beside other
	// work) may take longer than the period to run it
	for deadline := time.Now().Add(5 * time.Second); r.released.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if n := r.released.Load(); n != 2 {
		t.Errorf("released %d times after two idle periods, want 2", n)
	}
}

// QuietStart's quiet ends at the first tools/call, not a second after the start: calls a
// client makes at once would make their garbage with the collector off, and the heap they grow
// leaves the runtime's bookkeeping resident (0.5 MB of the idle serve). Red with mutant
// quiet-start-past-calls.
func TestQuietStartEndsAtTheFirstCall(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT set: QuietStart leaves the collector as the operator set it")
	}
	gcPercent := func() int {
		p := debug.SetGCPercent(100)
		debug.SetGCPercent(p)
		return p
	}
	was := gcPercent()
	QuietStart()
	defer endQuietStart()
	if p := gcPercent(); p != -1 {
		t.Fatalf("QuietStart left the collector at GOGC=%d, want it off", p)
	}
	cs, _ := connect(t, testPolicy(time.Minute, 2), &fakeExec{}, nil)
	if p := gcPercent(); p != -1 {
		t.Fatalf("the collector was back before any call (GOGC=%d): the quiet covers initialize", p)
	}
	if _, err := call(t, context.Background(), cs, map[string]any{"echo": "x"}); err != nil {
		t.Fatal(err)
	}
	if p := gcPercent(); p != was {
		t.Fatalf("after the first call the collector is at GOGC=%d, want %d back (QuietStart's second is not over)", p, was)
	}
}
