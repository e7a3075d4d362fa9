package serve

import (
	"os"
	"runtime"
)

// OneProcessor runs serve's Go code on one processor (GOMAXPROCS 1) when it serves one client
// over stdio. That serve's work is a chain (a request read, decoded, checked, the command
// started, its output read, the answer written); with a processor per CPU each hand-off woke a
// thread on another CPU, which on a 2-CPU host is the one the command runs on. Measured, two
// serves interleaved call by call (docs/perf-allowlist.md, twelfth round): the allowlist call
// p50 −180 µs back to back, −90 µs 30 ms apart, p99 lower; four calls at once and the docker
// scheme's calls unchanged. A blocking system call still hands the processor on (the runtime
// does), and the commands themselves are processes of their own, on every CPU. GOMAXPROCS
// in the environment: the operator's setting stands.
func OneProcessor() {
	if os.Getenv("GOMAXPROCS") != "" {
		return
	}
	runtime.GOMAXPROCS(1)
}
