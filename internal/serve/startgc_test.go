package serve

import (
	"runtime"
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
	if n := r.released.Load(); n != 1 {
		t.Fatalf("released %d times after one idle period, want 1", n)
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if got := int64(after.HeapReleased) - int64(before.HeapReleased); got < 32<<20 {
		t.Errorf("the heap released %d bytes more after the idle period: the 64 MB of garbage stayed resident", got)
	}
	r.busy()
	time.Sleep(300 * time.Millisecond)
	if n := r.released.Load(); n != 2 {
		t.Errorf("released %d times after two idle periods, want 2", n)
	}
}
