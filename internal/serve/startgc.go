package serve

import (
	"os"
	"runtime/debug"
	"time"
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
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" || mutated("quiet-start") {
		return
	}
	pct := debug.SetGCPercent(-1)
	lim := debug.SetMemoryLimit(StartHeapLimit)
	time.AfterFunc(StartQuiet, func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(lim)
	})
}
