package harness

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Control is a negative control: a deliberately weak policy (or, where no policy key can
// weaken a layer, a breach staged from outside) under which one detector must report BREACH.
// A detector that stays silent under its control proves nothing and fails the run.
type Control struct {
	Detector string `json:"detector"`
	Scenario string `json:"scenario"`
	// Kind: "policy" (a weak policy lets the attack through), "expectation" (the detector is
	// held to a tighter bound than the policy enforces, so what it measured must exceed it),
	// or "staged" (the breach is made by the harness outside the sandbox).
	Kind     string `json:"kind"`
	Weakness string `json:"weakness"`
	NeedRoot bool   `json:"need_root,omitempty"`
	// Mutate weakens the run's policy; Tighten holds the detector to a tighter bound than the
	// policy enforces; Inject stages a breach from outside the sandbox. A control sets one.
	Mutate  func(*policy.Policy, *Arena) error `json:"-"`
	Tighten func(*Expect)                      `json:"-"`
	Inject  func(*Arena)                       `json:"-"`
}

// ControlResult is one control's run.
type ControlResult struct {
	Control
	Fired   bool    `json:"fired"`
	Outcome Outcome `json:"outcome"`
	Detail  string  `json:"detail"`
}

// RunControls runs each control against the scheme's control policy (o.Policy, which on its
// own contains every control's scenario) and reports whether its detector fired.
func RunControls(ctx context.Context, ctrls []Control, o Options) ([]ControlResult, error) {
	if o.Policy == nil || len(ctrls) == 0 {
		return nil, fmt.Errorf("the scheme has no negative controls in this build")
	}
	base := o.Policy
	all, err := Load()
	if err != nil {
		return nil, err
	}
	byID := map[string]*Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	out := make([]ControlResult, len(ctrls))
	type job struct {
		s  *Scenario
		co Options
	}
	jobs := make([]*job, len(ctrls))
	for i, c := range ctrls {
		out[i].Control = c
		s := byID[c.Scenario]
		if s == nil {
			return nil, fmt.Errorf("control for %s names unknown scenario %s", c.Detector, c.Scenario)
		}
		if c.NeedRoot && os.Geteuid() != 0 {
			out[i].Outcome, out[i].Detail = Error, "could not run: needs root (run the harness as root to prove this detector)"
			continue
		}
		co := o
		co.Policy, co.mutate, co.expect, co.inject, co.Progress = base, c.Mutate, c.Tighten, c.Inject, nil
		if !slices.Contains(s.DetectorsFor(o.Adapter.Offer()), c.Detector) {
			s = withDetector(s, c.Detector)
		}
		jobs[i] = &job{s, co}
	}
	// Each control is its own run (its own serve and arena): they go side by side as scenarios
	// do, the exclusive ones alone after.
	var mu sync.Mutex
	var firstErr error
	schedule(o.Parallel, len(jobs), func(i int) bool { return jobs[i] != nil && jobs[i].s.Exclusive }, func(i int) {
		j, c := jobs[i], ctrls[i]
		if j == nil {
			return
		}
		rep, err := Run(ctx, []*Scenario{j.s}, j.co)
		if err != nil {
			mu.Lock()
			firstErr = cmp.Or(firstErr, err)
			mu.Unlock()
			return
		}
		r := rep.Results[0]
		out[i].Outcome = r.Outcome
		// A crash or a protocol failure is an ERROR: it fires no control.
		out[i].Fired = r.Outcome == Breach && slices.Contains(r.Breached(), c.Detector)
		out[i].Detail = r.Reason
		for _, f := range r.Findings {
			if f.Detector == c.Detector {
				out[i].Detail = f.Detail
			}
		}
		if !out[i].Fired && len(r.Started) > 0 {
			// what the attack's steps did, to tell a silent detector from an attack that never
			// ran (a call timed out on a loaded host)
			out[i].Detail += "; the scenario's steps: " + strings.Join(r.Started, "; ")
		}
	})
	if firstErr != nil {
		return nil, firstErr
	}
	return out, nil
}

// withDetector is the scenario judged by d too, under every scheme (its detectors or a
// scheme's own for it).
func withDetector(s *Scenario, d string) *Scenario {
	c := *s
	c.controlled = append(slices.Clone(s.controlled), d)
	return &c
}
