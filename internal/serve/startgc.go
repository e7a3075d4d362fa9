package serve

import (
	"os"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
)

// StartHeapLimit bounds the heap while QuietStart holds the collector off.
const StartHeapLimit = 64 << 20

// StartQuiet is how long QuietStart holds the collector off: serve's start to its first
// answers takes tens of milliseconds.
const StartQuiet = time.Second

// QuietStart keeps the garbage collector from running during serve's start-up. Start-up
// allocates a few MB (policy, schemas, the executor's tables): past the runtime's initial 4 MB
// goal a collection ran concurrently with the first answers, on a 2-CPU host a few ms of the
// start's critical path. The heap stays bounded meanwhile (StartHeapLimit: the runtime collects
// when it nears it), and after StartQuiet the collector is back as it was. GOGC or GOMEMLIMIT
// in the environment: the operator's setting stands, nothing changes.
func QuietStart() {
	defer startGarbage(testhooks.StartGarbage())
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" || mutated("quiet-start") {
		return
	}
	pct := debug.SetGCPercent(-1)
	lim := debug.SetMemoryLimit(StartHeapLimit)
	var once sync.Once
	end := func() {
		once.Do(func() {
			debug.SetGCPercent(pct)
			debug.SetMemoryLimit(lim)
		})
	}
	quietEnd.Store(&end)
	time.AfterFunc(StartQuiet, end)
}

// quietEnd ends QuietStart's quiet (nil: none holds).
var quietEnd atomic.Pointer[func()]

// endQuietStart gives the collector back at the first tools/call: start-up is over once a
// client calls a tool. Calls made in QuietStart's second made their garbage with the collector
// off (146 kB a call then), and the heap they grew left the runtime's own bookkeeping for it
// resident after the idle release: 0.5 MB of an idle serve's memory (thirteenth round).
func endQuietStart() {
	if mutated("quiet-start-past-calls") {
		return
	}
	if end := quietEnd.Swap(nil); end != nil {
		(*end)()
	}
}

// IdleRelease is how long serve waits without a call before it hands the memory it no longer
// uses back to the system (a collection, then the free pages returned): an MCP server sits
// idle most of its life, and the runtime's own scavenger returns pages slowly, while the
// start-up's garbage (QuietStart held the collector off) and a burst of calls' buffers stay
// resident until the next collection, which an idle serve never triggers.
var IdleRelease = time.Second

// idleReleaser runs debug.FreeOSMemory once serve has had no call for IdleRelease: first
// after its start, then after each call (a call's start and end both count as activity).
type idleReleaser struct {
	mu       sync.Mutex
	t        *time.Timer
	released atomic.Int64 // how many times memory was handed back (tests)
}

func newIdleReleaser() *idleReleaser {
	r := &idleReleaser{}
	r.t = time.AfterFunc(StartQuiet+IdleRelease, func() {
		if !mutated("idle-release") {
			debug.FreeOSMemory()
		}
		r.released.Add(1)
	})
	return r
}

// busy: a call starts or ends now.
func (r *idleReleaser) busy() {
	r.mu.Lock()
	r.t.Reset(IdleRelease)
	r.mu.Unlock()
}

func (r *idleReleaser) stop() {
	r.mu.Lock()
	r.t.Stop()
	r.mu.Unlock()
}

// garbageSink keeps the test hook's allocations from being optimised away.
var garbageSink [][]byte

// startGarbage allocates n bytes and drops them (testhooks.StartGarbage; 0 in a release build).
func startGarbage(n int) {
	for ; n > 0; n -= 1 << 20 {
		garbageSink = append(garbageSink, make([]byte, 1<<20))
	}
	garbageSink = nil
}
