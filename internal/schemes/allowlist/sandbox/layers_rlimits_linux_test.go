//go:build linux

package sandbox

import (
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial37 F10: the rlimits row said "CPU time = timeout (measured: map[core:0 cpu:11 ...])"
// for a 30 s timeout, while a call gets 31 s: the row says what a call gets and that the
// measure is the probe's own, in words.
func TestRlimitsRowSaysCallAndProbeApart(t *testing.T) {
	p := policy.Default(alsec.Name)
	p.Limits.Timeout = policy.Duration{Duration: 30 * time.Second}
	e := &Executor{pol: p, al: alsec.Of(p), dropUID: true,
		probe: helper.ProbeReport{Rlimits: map[string]uint64{"cpu": 11, "fsize": 64 << 20, "nofile": 256, "nproc": 64, "core": 0, "memlock": 0}}}
	d := e.rlimitsDetail()
	for _, want := range []string{
		"CPU time 31 s (limits.timeout 30s, rounded up, + 1 s)",
		"serve's probe, whose own timeout is 10s (so CPU time 11 s): cpu 11 s, fsize 64MiB, nofile 256, nproc 64, core 0, memlock 0",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("row %q\nlacks %q", d, want)
		}
	}
	if strings.Contains(d, "map[") {
		t.Errorf("a Go map in the row: %q", d)
	}
}
