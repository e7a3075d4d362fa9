package harness

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Proving that a step started. Detectors say what an attack did; when they are quiet, that is
// containment only if the attack was actually tried. A step a loaded machine timed out before
// it acted (an interpreter still loading, a container still being created) leaves every
// detector quiet for the wrong reason, so each step must prove it started, by evidence the
// sandboxed code cannot fake into a containment:
//
//   - python and shell steps (every adapter), and argv steps an adapter runs through a shell
//     (docker): the start token (StartToken) the adapter's prelude prints before the step's
//     first statement, found joined in the call's structured stdout or stderr. serve's own
//     texts (refusals quoting the arguments, errors) never carry it joined.
//   - argv steps run as a pinned program with no shell (allowlist), and raw tool calls: the
//     call's result came back with the program's exit status (it ran to its end), or it timed
//     out after printing something, or one of the step's processes (not serve's own binary) was
//     seen running from the host (watchStart).
//   - a call the server refused by policy: the refusal names the rule ("refused by rule X:"),
//     with no structured result. That is containment and counts as tried.
//   - a step during which the scenario kills the server gets no result: one of its processes
//     must have been seen running from the host.
//
// A step none of these prove is an ERROR ("did not start"), never CONTAINED. The proofs are
// consulted only when no detector reported a breach: a breach stands whatever they say.

// refusalPrefix starts serve's text for a call its policy refused (executor.Refusal.Error).
const refusalPrefix = "refused by rule "

// startProof says how call c proves its step started, or why it does not.
func startProof(c call, st Step, sighted bool) (ok bool, why string) {
	seen := "one of its processes was seen running from the host"
	if c.err != nil {
		if sighted {
			return true, "no result came back (" + c.err.Error() + "), but " + seen
		}
		return false, "did not start: no result came back (" + c.err.Error() + ") and no process of it was seen running"
	}
	if !c.structured {
		if c.isError && strings.HasPrefix(c.text, refusalPrefix) {
			rule, _, _ := strings.Cut(strings.TrimPrefix(c.text, refusalPrefix), ":")
			return true, "refused by policy (rule " + rule + ")"
		}
		return false, "did not start: the server did not run it: " + clip(c.text, 200)
	}
	if !st.Start.IsZero() {
		if strings.Contains(c.res.Stdout, st.Start.Joined()) || strings.Contains(c.res.Stderr, st.Start.Joined()) {
			return true, "its start token came back"
		}
		if c.res.TimedOut {
			return false, "did not start: timed out before acting (its start token never came back)"
		}
		return false, fmt.Sprintf("did not start: its start token never came back (exit %d): the step's code never ran", c.res.ExitCode)
	}
	switch {
	case !c.res.TimedOut:
		return true, fmt.Sprintf("the program ran to its exit status (%d)", c.res.ExitCode)
	case c.res.Stdout != "" || c.res.Stderr != "":
		return true, "timed out after printing output"
	case sighted:
		return true, "timed out; " + seen
	}
	return false, "did not start: timed out before acting (no output, no process of it seen running)"
}

// timedOutBeforeActing reports a call that came back timed out without its step's start token:
// the step's code never ran.
func timedOutBeforeActing(c call, st Step) bool {
	return c.err == nil && c.structured && c.res.TimedOut && !st.Start.IsZero() &&
		!strings.Contains(c.res.Stdout, st.Start.Joined()) && !strings.Contains(c.res.Stderr, st.Start.Joined())
}

// startProofs judges every step's calls, and adds each unproven step to unsure.
func (r *run) startProofs(steps []Step, unsure []string) (lines, unsureOut []string) {
	r.mu.Lock()
	calls := append([]call(nil), r.calls...)
	r.mu.Unlock()
	for i, st := range steps {
		n, proven := 0, 0
		var first, bad string
		for _, c := range calls {
			if c.step != i || c.retried {
				continue
			}
			n++
			ok, why := startProof(c, st, r.sighted[i].Load())
			if c.secondTry {
				why += " (on a second try: the first timed out before acting)"
			}
			if ok {
				proven++
				if first == "" {
					first = why
				}
			} else if bad == "" {
				bad = why
			}
		}
		switch {
		case n == 0:
			bad = "did not start: no call was made"
			fallthrough
		case proven < n:
			what := fmt.Sprintf("step %d (%s)", i, st.Kind())
			if n > 1 {
				what = fmt.Sprintf("step %d (%s, %d of %d copies unproven)", i, st.Kind(), n-proven, n)
			}
			unsure = append(unsure, what+" "+bad)
			lines = append(lines, what+": "+bad)
		default:
			lines = append(lines, fmt.Sprintf("step %d (%s): %s", i, st.Kind(), first))
		}
	}
	return lines, unsure
}

// watchStart samples, every 25ms until ctx ends, the processes of the arena's calls (tagged
// argv, or cwd in the workspace: procsOf) and marks step i sighted at the first one that is not
// the mcpsandbox binary itself (serve's exec helper runs in the workspace before it execs) and
// was not already running before the step (an earlier step's survivor proves nothing here).
func (r *run) watchStart(ctx context.Context, i int, before map[int]bool) {
	self := canonicalExe(r.bin)
	for !r.sighted[i].Load() {
		for _, pid := range procsOf(r.a) {
			if before[pid] {
				continue
			}
			exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
			if err != nil {
				continue // gone, or not ours to read: no proof either way
			}
			if exe = strings.TrimSuffix(exe, " (deleted)"); exe != self && exe != r.bin {
				r.sighted[i].Store(true)
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(25 * time.Millisecond):
		}
	}
}

func canonicalExe(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	if e, err := filepath.EvalSymlinks(p); err == nil {
		p = e
	}
	return p
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
