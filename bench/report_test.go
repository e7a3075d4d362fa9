package main

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

func millis(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }

// withRows records rows as the bench does (name with its client, then durations all equal to
// the given p50 but the last, the p99's).
func withRows(t *testing.T, rs map[string][2]float64) {
	t.Helper()
	old := rows
	t.Cleanup(func() { rows = old })
	rows = nil
	for what, f := range rs {
		d := make([]time.Duration, 100)
		for i := range d {
			d[i] = millis(f[0])
		}
		d[98], d[99] = millis(f[1]), millis(f[1])
		record(what, d)
	}
}

func line(t *testing.T, prefix string) string {
	t.Helper()
	for _, l := range targets() {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	t.Fatalf("no target line %q in %q", prefix, targets())
	return ""
}

// Every row states its client: the suffix becomes the client column, a row without one says so.
func TestRowsStateTheirClient(t *testing.T) {
	withRows(t, map[string][2]float64{"a call; client: Go MCP SDK v1, stdio": {1, 1}, "bare": {1, 1}})
	got := map[string]string{}
	for _, r := range rows {
		got[r.what] = r.client
	}
	if got["a call"] != "Go MCP SDK v1, stdio" || got["bare"] != "(not stated)" {
		t.Fatalf("clients: %q", got)
	}
}

// Issue 28's ratios are judged on the same run's rows: 2× bare, 0.6× the peer, p99 ≤ 2× p50.
func TestAllowlistTargetsJudgeTheSameRunsRatios(t *testing.T) {
	const call = "run_allowed_command wc in.txt, MCP stdio, warm, back-to-back; client: Go"
	const peer = "peer x run_command \"wc in.txt\" (no isolation), MCP stdio, warm, back-to-back; client: Go"
	withRows(t, map[string][2]float64{"baseline: bare fork+exec wc in.txt; client: none": {2, 3}, call: {4, 8}, peer: {7, 9}})
	if l := line(t, "allowlist call p50 ≤ 2× bare"); !strings.Contains(l, ": met") {
		t.Errorf("4 ms against 2 ms bare is 2×: %s", l)
	}
	if l := line(t, "allowlist call p50 ≤ 0.6× the unsandboxed peer's, back-to-back"); !strings.Contains(l, ": met") {
		t.Errorf("4 ms against the peer's 7 ms is 0.57×: %s", l)
	}
	withRows(t, map[string][2]float64{"baseline: bare fork+exec wc in.txt; client: none": {2, 3}, call: {4.5, 9.1}, peer: {7, 9}})
	if l := line(t, "allowlist call p50 ≤ 2× bare"); !strings.Contains(l, "NOT met") {
		t.Errorf("4.5 ms against 2 ms bare is 2.25×: %s", l)
	}
	if l := line(t, "allowlist call p50 ≤ 0.6× the unsandboxed peer's, back-to-back"); !strings.Contains(l, "NOT met") {
		t.Errorf("4.5 ms against the peer's 7 ms is 0.64×: %s", l)
	}
	if l := line(t, "allowlist call p99 ≤ 2× p50"); !strings.Contains(l, "NOT met") {
		t.Errorf("p99 9.1 ms against p50 4.5 ms: %s", l)
	}
}

// The sustained docker rate stated is the highest offered rate, going up, at which the pooled
// p50 stays within 15 ms: a faster rate that happens to pass after one that failed does not count.
func TestDockerSustainedRateIsTheLastHeldGoingUp(t *testing.T) {
	row := func(rate string) string {
		return "docker pooled (pool = 4) under open-loop load at " + rate + " calls/s for 20s: 0 of 20 calls found the pool empty; client: Go"
	}
	withRows(t, map[string][2]float64{row("1"): {9, 12}, row("2"): {10, 14}, row("4"): {40, 300}, row("8"): {14, 400}})
	sortByRate(t) // the map's order is random; the bench records the rates going up
	if l := line(t, "docker: the rate we state"); !strings.Contains(l, "(issue 28): 2 calls/s") {
		t.Errorf("want 2 calls/s: %s", l)
	}
	for _, l := range targets() {
		if strings.HasPrefix(l, "serve start") {
			t.Errorf("no start row, no start target: %s", l)
		}
	}
}

func sortByRate(t *testing.T) {
	t.Helper()
	for i := range rows {
		for j := i + 1; j < len(rows); j++ {
			a, b := loadRow.FindStringSubmatch(rows[i].what), loadRow.FindStringSubmatch(rows[j].what)
			if a != nil && b != nil && a[1] > b[1] { // single digits
				rows[i], rows[j] = rows[j], rows[i]
			}
		}
	}
}

// The idle serve's memory is judged against DESIGN.md's 20 MB, from the note the run made.
func TestIdleRSSJudged(t *testing.T) {
	withRows(t, nil)
	old := notes
	t.Cleanup(func() { notes = old })
	for kb, want := range map[int]string{20480: "met (VmRSS 20480 kB", 20784: "NOT met (VmRSS 20784 kB"} {
		notes = []string{"allowlist serve idle VmRSS: " + strconv.Itoa(kb) + " kB (2 s after its last call)"}
		if l := line(t, "allowlist serve idle RSS"); !strings.Contains(l, want) {
			t.Errorf("%d kB: %q, want %q", kb, l, want)
		}
	}
}

// The docker rate the bench states is README's: the highest offered rate, going up, at which no
// call found the pool empty; the p50 rate is named as issue 28's, not as the one stated
// (trial40 F8: README said 4 calls/s, the bench "stated" 8).
func TestDockerStatedRateIsREADMEs(t *testing.T) {
	row := func(rate, empty string) string {
		return "docker pooled (pool = 4) under open-loop load at " + rate + " calls/s for 10s: " + empty + " of 20 calls found the pool empty; client: Go"
	}
	withRows(t, map[string][2]float64{row("1", "0"): {4, 5}, row("2", "0"): {4, 6}, row("4", "0"): {4, 7}, row("8", "1"): {5, 22}})
	sortByRate(t)
	l := line(t, "docker: the rate we state")
	if !strings.Contains(l, "no call found the pool empty), in this run: 4 calls/s;") || !strings.Contains(l, "(issue 28): 8 calls/s") {
		t.Errorf("want 4 calls/s stated and 8 calls/s as issue 28's: %s", l)
	}
}

// On a machine whose load average was over its CPU count at the run's start or end, no target
// is judged met or NOT met: each says "not judged" and the load, the figures kept (trial40 F7:
// "met" at load average 24 on 2 CPUs, where a quiet VM had both NOT met). Red with mutant
// bench-load-unstated.
func TestTargetsNotJudgedUnderLoad(t *testing.T) {
	withRows(t, map[string][2]float64{
		"baseline: bare fork+exec; client: x": {9, 10}, "run_allowed_command wc in.txt, MCP stdio, warm, back-to-back; client: x": {10, 11},
	})
	if got := overload("24.14 20.56 13.76", "1.00 1.00 1.00", 2); got != "load average 24.14 on 2 CPUs" {
		t.Fatalf("overload: %q", got)
	}
	if got := overload("0.50 0.40 0.30", "1.90 1.00 1.00", 2); got != "" {
		t.Fatalf("a machine under its CPU count: %q", got)
	}
	old := busy
	t.Cleanup(func() { busy = old })
	busy = overload("24.14 20.56 13.76", "", 2)
	l := line(t, "allowlist call p50 ≤ 2× bare")
	if !strings.Contains(l, ": not judged: load average 24.14 on 2 CPUs (") || strings.Contains(l, ": met") {
		t.Errorf("under load: %s", l)
	}
	busy = ""
	if l := line(t, "allowlist call p50 ≤ 2× bare"); !strings.Contains(l, ": met (") {
		t.Errorf("control, no load: %s", l)
	}
}

// The allowlist's targets are judged by the load at the run's start and when its rows ended, not
// at the run's end, which the bench's own docker rows raise (load average ~5 on 2 CPUs on a quiet
// machine: every target "not judged" in every run). A load when the allowlist's rows ended still
// stops their judging (red with mutant bench-load-run-wide), and the run-wide one the others'.
func TestAllowlistTargetsJudgedByTheirOwnLoad(t *testing.T) {
	withRows(t, map[string][2]float64{
		"baseline: bare fork+exec; client: x": {9, 10}, "run_allowed_command wc in.txt, MCP stdio, warm, back-to-back; client: x": {10, 11},
		"docker run_python_sandbox, pooled; client: x": {5, 6},
	})
	oldBusy, oldAl := busy, busyAllowlist
	t.Cleanup(func() { busy, busyAllowlist = oldBusy, oldAl })
	quiet, loaded := "", overload("0.40 0.30 0.20", "3.10 1.00 1.00", 2)
	busy, busyAllowlist = loaded, &quiet
	if l := line(t, "allowlist call p50 ≤ 2× bare"); !strings.Contains(l, ": met (") {
		t.Errorf("quiet when the allowlist's rows ended, loaded at the run's end: %s", l)
	}
	if l := line(t, "docker pooled call p50"); !strings.Contains(l, ": not judged: load average 3.10 on 2 CPUs (") {
		t.Errorf("the docker targets keep the run-wide load: %s", l)
	}
	busy, busyAllowlist = quiet, &loaded
	if l := line(t, "allowlist call p50 ≤ 2× bare"); !strings.Contains(l, ": not judged: load average 3.10 on 2 CPUs (") {
		t.Errorf("loaded when the allowlist's rows ended: %s", l)
	}
}
