package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Calibrating wall_time. A call's wall time is the policy's timeout plus what the whole path
// around the program costs: the MCP round trip, serve's work, a container's start. On an idle
// machine that is a few hundred milliseconds; on a loaded one (load 20-35 on 2 CPUs, as when CI
// runs packages in parallel) it is seconds, and a fixed grace of 3s turns load into "breaches".
// So before the steps of a scenario that wall_time judges, the harness measures this run's own
// latency of a trivial call (same serve, same policy, same tool kind as the first step), and
// widens the bound by the p90 of those calls, capped (CalibrationCap, never more than the
// timeout itself, and for a scenario's return_within at most 3/4 of the gap to the timeout), and
// says the figure in the detector's detail. A call that never ends (`sleep 3600` past a
// timeout that is not enforced) or that runs to the timeout where return_within forbids it
// stays a BREACH whatever the machine's load.

const (
	// calibrationCalls are measured after one warm-up call (which pays serve's start-up
	// checks, which the steps do not).
	calibrationCalls = 3
	// CalibrationCap is the most the measured latency may widen a call's bound.
	CalibrationCap = 5 * time.Second
)

// calibration is one run's measured latency of a trivial call.
type calibration struct {
	samples []time.Duration
	p90     time.Duration
	why     string // why nothing was measured (samples empty)
	what    string // the trivial step measured
}

// p90 is the nearest-rank 90th percentile (with a handful of samples, the largest).
func p90(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(math.Ceil(0.9*float64(len(s))))-1]
}

// trivialSteps are the steps tried as the trivial call, the first step's kind first (the same
// tool and path as the attack): the first one the policy can express and that runs to exit 0
// is measured.
func trivialSteps(first Step) []Step {
	py, sh := Step{Python: "pass"}, Step{Shell: "true"}
	argv := []Step{{Argv: []string{"true"}}, {Argv: []string{"ls"}}}
	if len(first.Argv) > 0 {
		argv = append(argv, Step{Argv: []string{first.Argv[0], "--version"}})
	}
	switch first.Kind() {
	case "python":
		return append([]Step{py, sh}, argv...)
	case "shell":
		return append([]Step{sh, py}, argv...)
	}
	return append(argv, sh, py)
}

// calibrate measures the trivial call against the arena's running serve. It never fails the
// scenario: with no trivial call this policy runs, the bound stays uncalibrated and says why.
func (r *run) calibrate(ctx context.Context, ad Adapter, p *policy.Policy, first Step) {
	limit := r.patience.Timeout + r.patience.Grace + CalibrationCap
	var tried []string
	for _, st := range trivialSteps(first) {
		params, err := ad.Params(st, r.a, p)
		if err != nil {
			continue
		}
		what := st.Kind() + " " + trivialText(st)
		run1 := func() (time.Duration, string) {
			cctx, cancel := context.WithTimeout(ctx, limit)
			defer cancel()
			start := time.Now()
			res, err := r.a.cs.CallTool(cctx, params)
			d := time.Since(start)
			switch {
			case err != nil:
				return d, err.Error()
			case res.IsError || res.StructuredContent == nil:
				return d, "no result: " + clip(ResultText(res), 120)
			}
			var out struct {
				ExitCode int  `json:"exit_code"`
				TimedOut bool `json:"timed_out"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &out)
			if out.TimedOut || out.ExitCode != 0 {
				return d, fmt.Sprintf("exit %d, timed out %v", out.ExitCode, out.TimedOut)
			}
			return d, ""
		}
		if _, bad := run1(); bad != "" { // warm-up
			tried = append(tried, what+": "+bad)
			continue
		}
		var ds []time.Duration
		for range calibrationCalls {
			d, bad := run1()
			if bad != "" {
				tried = append(tried, what+": "+bad)
				ds = nil
				break
			}
			ds = append(ds, d)
			if d > CalibrationCap && p90(ds) == d {
				break // the bound is capped whatever the next calls measure: spare a loaded machine
			}
		}
		if len(ds) > 0 {
			r.calib = calibration{samples: ds, p90: p90(ds), what: what}
			return
		}
	}
	if len(tried) == 0 {
		r.calib.why = "not calibrated: this policy runs none of the trivial steps"
		return
	}
	r.calib.why = "not calibrated: no trivial call ran (" + strings.Join(tried, "; ") + ")"
}

func trivialText(st Step) string {
	switch {
	case len(st.Argv) > 0:
		return strings.Join(st.Argv, " ")
	case st.Python != "":
		return st.Python
	}
	return st.Shell
}

// ResultText is the text content of a tool result, joined.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// callBound is how long one call of the scenario may take under e, and how that was reached:
// the policy's timeout plus grace, or the scenario's tighter return_within; plus, for a copy
// of a parallel step, the timeout again (a queued call may wait that long for a slot); plus the
// measured latency of a trivial call, capped.
func (r *run) callBound(e Expect, parallel bool) (time.Duration, string) {
	base, why := e.Timeout+e.Grace, fmt.Sprintf("timeout %s + grace %s", e.Timeout, e.Grace)
	rw := r.s.ReturnWithin.Duration
	tight := rw > 0 && rw < e.Timeout+e.Grace
	if tight {
		base, why = rw, fmt.Sprintf("return_within %s", rw)
	}
	if parallel {
		base += e.Timeout
		why += fmt.Sprintf(" + timeout %s waiting for a slot", e.Timeout)
	}
	extra, how := r.calib.widen(e, tight, rw)
	return base + extra, fmt.Sprintf("%s = %s + %s", base+extra, why, how)
}

// widen is how much the measured latency adds to a bound under e, and how that was reached.
func (c calibration) widen(e Expect, tight bool, returnWithin time.Duration) (time.Duration, string) {
	if len(c.samples) == 0 {
		why := c.why
		if why == "" {
			why = "not calibrated"
		}
		return 0, why
	}
	lim, limWhy := CalibrationCap, "the cap"
	if e.Timeout < lim {
		lim, limWhy = e.Timeout, "the timeout"
	}
	if tight {
		// A call that hangs to the timeout (what return_within forbids) must stay a breach:
		// the widened bound stays below the timeout, by a quarter of the gap.
		if gap := max(0, (e.Timeout-returnWithin)*3/4); gap < lim {
			lim, limWhy = gap, "3/4 of the gap from return_within to the timeout"
		}
	}
	var ss []string
	for _, d := range c.samples {
		ss = append(ss, d.Round(time.Millisecond).String())
	}
	how := fmt.Sprintf("measured trivial-call p90 %s (%s, %d calls: %s)", c.p90.Round(time.Millisecond), c.what, len(c.samples), strings.Join(ss, " "))
	if c.p90 > lim {
		return lim, how + fmt.Sprintf(", capped at %s (%s)", lim, limWhy)
	}
	return c.p90.Round(time.Millisecond), how
}
