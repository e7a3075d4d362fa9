//go:build linux

package sandbox

import (
	"fmt"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// rlimitsDetail is the rlimits row: what a call gets, and what serve's probe read back of its
// own limits, as words. The row said "CPU time = timeout (measured: map[core:0 cpu:11 ...])"
// for a 30 s timeout: the 11 s is the probe's own limit (its timeout is probeCall's), and a
// reader checking the claim against the measure found them disagreeing (trial37 F10).
func (e *Executor) rlimitsDetail() string {
	if mutated("check-rlimits-measure-unexplained") {
		return fmt.Sprintf("address space %s, file size %s, 256 open files, CPU time = timeout (measured: %v)", e.pol.Limits.Memory, e.al.MaxFileSize, e.probe.Rlimits)
	}
	call := e.pol.Limits.Timeout.Duration
	return fmt.Sprintf("a call gets address space %s (limits.memory), file size %s, 256 open files, CPU time %d s (limits.timeout %s, rounded up, + 1 s); "+
		"measured on serve's probe, whose own timeout is %s (so CPU time %d s): %s",
		e.pol.Limits.Memory, e.al.MaxFileSize, e.cpuSeconds(call), call, probeCall.Timeout, e.cpuSeconds(probeCall.Timeout), rlimitsText(e.probe.Rlimits))
}

// cpuSeconds is the CPU time limit a call of timeout d gets (the one e.rlimits sets).
func (e *Executor) cpuSeconds(d time.Duration) uint64 {
	for _, l := range e.rlimits(executor.Call{Timeout: d, MaxOutput: probeCall.MaxOutput}) {
		if l.Resource == unix.RLIMIT_CPU {
			return l.Value
		}
	}
	return 0
}

// rlimitsText is the limits the probe read back, in a fixed order and with units ("cpu 11 s,
// fsize 64MiB, nofile 256, nproc 64, core 0, memlock 0"), not a Go map.
func rlimitsText(got map[string]uint64) string {
	var out []string
	for _, n := range []string{"cpu", "as", "fsize", "nofile", "nproc", "core", "memlock"} {
		v, ok := got[n]
		switch {
		case !ok:
		case n == "cpu":
			out = append(out, fmt.Sprintf("cpu %d s", v))
		case (n == "fsize" || n == "as") && v > 0:
			out = append(out, n+" "+policy.Size(v).String())
		default:
			out = append(out, fmt.Sprintf("%s %d", n, v))
		}
	}
	if len(out) == 0 {
		return "nothing read back"
	}
	return strings.Join(out, ", ")
}
