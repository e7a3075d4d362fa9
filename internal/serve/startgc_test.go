package serve

import (
	"runtime"
	"testing"
	"time"
)

// After IdleRelease without a call the memory serve no longer uses goes back to the system:
// garbage a burst of calls left (64 MB here) is released, not kept resident until a collection
// that an idle serve never triggers. Each period of activity is followed by one release.
func TestIdleReleaseHandsMemoryBack(t *testing.T) {
	old := IdleRelease
	IdleRelease = 30 * time.Millisecond
	defer func() { IdleRelease = old }()
	r := newIdleReleaser()
	defer r.stop()
	garbage := make([][]byte, 64)
	for i := range garbage {
		garbage[i] = make([]byte, 1<<20)
		garbage[i][0] = 1
	}
	garbage = nil
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
