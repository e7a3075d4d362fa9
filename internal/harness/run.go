package harness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Outcome is a scenario's verdict.
type Outcome string

// The verdicts.
const (
	Contained     Outcome = "CONTAINED"
	Breach        Outcome = "BREACH"
	Error         Outcome = "ERROR"
	NotApplicable Outcome = "N/A"
)

// Expect is what the detectors hold the run to: the policy's own promises, unless a control
// tightens one to show the measurement behind it is real.
type Expect struct {
	Timeout  time.Duration
	Output   int64
	Memory   int64
	FileSize int64         // 0: the scheme has no per-file cap on the host
	Grace    time.Duration // how far past Timeout a call may return
	Pids     int64         // processes a call may run at once (0: no limit the host can see)
	// CgroupWait is how long after the calls a cgroup that held them may still hold processes
	// (0: 3s, as for survivors).
	CgroupWait time.Duration
	// Protect are the policy's own protected workspace paths, beyond policy.DefaultProtect (the
	// persistence detector watches both).
	Protect []string
	// OwnKernel names the kernel of its own that answers the program's system calls (a VM-grade
	// runtime such as gVisor's runsc), "" when they reach the host's: the syscalls detector
	// then reports what that kernel answered instead of a host-kernel breach.
	OwnKernel string
	// Sessions is how many MCP sessions of one serve may hold a sandbox at once, and SessionKey
	// the policy key that says so (0: the policy keeps no state per session; sessions.go).
	Sessions   int
	SessionKey string
}

// Options configure a run.
type Options struct {
	Binary   string         // the mcpsandbox executable to run as `serve`
	Policy   *policy.Policy // as the user wrote it; the harness runs a copy (see Prepare)
	Parallel int            // scenarios at once (0: twice the CPUs, at least 4)
	// MaxTimeout caps limits.timeout in the run's copy of the policy (0: no cap), so that the
	// scenarios that must outlast the timeout take seconds, not minutes. Enforcing a timeout
	// is the same mechanism whatever its length.
	MaxTimeout time.Duration
	// Progress, if set, is called as each scenario finishes.
	Progress func(Result)
	// Notice, if set, is given the adapter's notice (Noticer) before the first scenario.
	Notice func(string)
	// Adapter is how the policy's scheme expresses the steps (the scheme registry's entry).
	Adapter Adapter

	// for controls
	mutate func(*policy.Policy, *Arena) error
	expect func(*Expect)
	inject func(*Arena)
}

// Result is one scenario's verdict and the evidence for it.
type Result struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Category string    `json:"category"`
	Outcome  Outcome   `json:"outcome"`
	Reason   string    `json:"reason,omitempty"`
	Findings []Finding `json:"findings,omitempty"`
	// Started is each step's proof that it started (or why it could not be proven), in order.
	Started []string `json:"started,omitempty"`
	// Workspace is what each call's transactional layer refused to apply (the commit check at
	// work), "step N: PATH: WHY", so a CONTAINED verdict shows which mechanism held.
	Workspace  []string `json:"workspace,omitempty"`
	DurationMS int64    `json:"duration_ms"`
}

// Breached lists the detectors that reported a breach.
func (r Result) Breached() []string {
	var d []string
	for _, f := range r.Findings {
		if f.Breach {
			d = append(d, f.Detector)
		}
	}
	return d
}

// Report is a whole run.
type Report struct {
	Scheme     string   `json:"scheme"`
	PolicyHash string   `json:"policy_hash"`
	Results    []Result `json:"results"`
	Counts     Counts   `json:"counts"`
	ElapsedMS  int64    `json:"elapsed_ms"`
}

// Counts tallies the outcomes.
type Counts struct {
	Contained     int `json:"contained"`
	Breached      int `json:"breached"`
	Errors        int `json:"errors"`
	NotApplicable int `json:"not_applicable"`
}

// OK reports whether every applicable scenario was contained.
func (r *Report) OK() bool { return r.Counts.Breached == 0 && r.Counts.Errors == 0 }

// Summary is the report's last line.
func (r *Report) Summary() string {
	return fmt.Sprintf("%d contained, %d breached, %d errors, %d n/a (%s)", r.Counts.Contained, r.Counts.Breached,
		r.Counts.Errors, r.Counts.NotApplicable, (time.Duration(r.ElapsedMS) * time.Millisecond).Round(100*time.Millisecond))
}

// call is one tool call's record.
type call struct {
	res        executor.Result
	text       string
	rawText    int
	isError    bool
	err        error
	dur        time.Duration
	bound      time.Duration // how long it may take: the timeout, plus the wait for a slot when queued
	boundWhy   string        // the bound and how it was reached (callBound)
	abandoned  bool
	step       int    // which step it belongs to
	structured bool   // a structured result came back (the program ran, or was started)
	retried    bool   // timed out before acting, and tried again: its start is not judged
	secondTry  bool   // the second try of a call that timed out before acting
	session    string // the MCP session it was made in (serve over HTTP; sessions.go)
	sandboxes  int    // a fill_cap call: serve's sandboxes running after it, counted from outside
	countErr   error  // why they could not be counted
}

// run is one scenario against one arena.
type run struct {
	s      *Scenario
	a      *Arena
	expect Expect
	// spare is how many sandboxes the policy keeps started ahead (a Sessioner's pool)
	spare int
	// patience is how long the harness waits for a call: the policy's own bound, never the
	// tighter one a control holds the detectors to, so an overrun is measured, not abandoned.
	patience      Expect
	unsure        []string // why a detector could not judge (an ERROR unless something breached)
	unsureMu      sync.Mutex
	siblingHit    atomic.Pointer[string]
	peakProcs     atomic.Int64
	mu            sync.Mutex
	calls         []call
	outsideBefore OutsideSnapshot
	egress        atomic.Pointer[string]
	peakRSS       atomic.Int64
	bin           string               // the mcpsandbox binary (serve and its helpers): never a step's program
	sighted       []atomic.Bool        // per step: a process of the step was seen running (see watchStart)
	protect       []protGlob           // the host-run paths the persistence detector watches
	hostRunBefore map[string]fileState // their files before the steps (persistence only)
	gitExecBefore map[string]bool      // program-running git config lines before the steps
	netnsHit      atomic.Pointer[string]
	cgroups       map[string]bool // cgroups that held the call's processes (survivors), under mu
	calib         calibration     // this run's trivial-call latency (wall_time scenarios only)
	cgroupLeft    string          // a cgroup still holding processes CgroupWait after a call returned (noteCgroupsAtReturn), under mu
	// cutShort: the policy's timeout ended a step after it acted but before a detector's
	// evidence could exist (set by the detectors): a load symptom, re-run once (runOne)
	cutShort atomic.Bool
	// listenHit: the host reached a listener on the arena's listen port (the listen detector)
	listenHit atomic.Pointer[string]
	steps     []Step  // the steps as run (with their start tokens)
	ad        Adapter // the scheme's adapter
	// the session_process detector's readings (sessions.go), under mu
	secretSeen   map[int]bool
	secretAlive  []int
	secretLooked bool
}

// inconclusive records why a detector could not judge; the scenario is then an ERROR. Its own
// lock: detectors call it while holding r.mu (a run that deadlocked there hung verify: trial34 F1).
func (r *run) inconclusive(why string) {
	r.unsureMu.Lock()
	r.unsure = append(r.unsure, why)
	r.unsureMu.Unlock()
}

func (r *run) allOutput() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	r.a.stagedMu.Lock()
	for _, s := range r.a.staged {
		b.WriteString(s)
	}
	r.a.stagedMu.Unlock()
	for _, c := range r.calls {
		b.WriteString(c.text)
		b.WriteString(c.res.Stdout)
		b.WriteString(c.res.Stderr)
	}
	return b.String()
}

// Run replays the scenarios against the policy and reports each verdict.
func Run(ctx context.Context, scs []*Scenario, o Options) (*Report, error) {
	ad := o.Adapter
	if ad == nil {
		return nil, fmt.Errorf("the harness has no adapter for the %q scheme in this build", o.Policy.Scheme)
	}
	// The scheme's own steps, checked; and steps for every scenario it takes.
	if err := ad.Offer().Complete(scs); err != nil {
		return nil, err
	}
	if r, ok := ad.(Readier); ok {
		if err := r.Ready(o.Policy); err != nil {
			return nil, err
		}
	}
	if n, ok := ad.(Noticer); ok && o.Notice != nil {
		if s := n.Notice(o.Policy); s != "" {
			o.Notice(s)
		}
	}
	if o.Binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the mcpsandbox binary to run as serve: %w", err)
		}
		o.Binary = exe
	}
	start := time.Now()
	rep := &Report{Scheme: o.Policy.Scheme, PolicyHash: o.Policy.Hash(), Results: make([]Result, len(scs))}
	schedule(o.Parallel, len(scs), func(i int) bool { return scs[i].Exclusive }, func(i int) {
		rep.Results[i] = runOne(ctx, scs[i], ad, o)
		if o.Progress != nil {
			o.Progress(rep.Results[i])
		}
	})
	for _, r := range rep.Results {
		switch r.Outcome {
		case Contained:
			rep.Counts.Contained++
		case Breach:
			rep.Counts.Breached++
		case Error:
			rep.Counts.Errors++
		case NotApplicable:
			rep.Counts.NotApplicable++
		}
	}
	rep.ElapsedMS = time.Since(start).Milliseconds()
	return rep, ctx.Err()
}

// schedule runs one(i) for i < n: the shared ones par at once (0: twice the CPUs, at least 4),
// then the exclusive ones alone.
func schedule(par, n int, exclusive func(int) bool, one func(int)) {
	if par <= 0 {
		par = max(4, 2*runtime.NumCPU())
	}
	sem := make(chan struct{}, par)
	var wg sync.WaitGroup
	for i := range n {
		if exclusive(i) {
			continue
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			one(i)
		}()
	}
	wg.Wait()
	for i := range n {
		if exclusive(i) {
			one(i)
		}
	}
}

// runOne runs a scenario, and once more from scratch (a fresh arena and serve) when its verdict
// was an ERROR because the policy's timeout cut a step short after it acted, before the work a
// detector needs was done (a fetch the timeout ended before it was made: a loaded machine). A
// step that timed out before acting is not re-run here: the step itself was already tried
// twice (run.step). A breach is never re-run (it stands); the second run is judged by every
// detector again, so it can only replace "unproven" with a verdict; a second ERROR stays an
// ERROR and names both runs.
func runOne(ctx context.Context, s *Scenario, ad Adapter, o Options) Result {
	start := time.Now()
	res, cut := runOnce(ctx, s, ad, o)
	if res.Outcome == Error && cut && ctx.Err() == nil {
		first := res
		res, _ = runOnce(ctx, s, ad, o)
		note := "a second run: the first was an ERROR because the timeout cut a step short after it acted (a loaded machine): " + first.Reason
		res.Started = append(res.Started, note)
		if res.Outcome == Error {
			res.Reason += " (" + note + ")"
		}
	}
	res.DurationMS = time.Since(start).Milliseconds()
	return res
}

// runOnce runs one scenario once: whether it applies, the arena and the policy it serves, the
// calls with their watchers, the detectors, the verdict. cutShort: a step was cut short (the
// caller may retry).
func runOnce(ctx context.Context, s *Scenario, ad Adapter, o Options) (res Result, cutShort bool) {
	res = Result{ID: s.ID, Title: s.Title, Category: s.Category}
	var r *run
	defer func() { cutShort = r != nil && r.cutShort.Load() }()
	steps, why := applicable(s, ad, o)
	if why != "" {
		res.Outcome, res.Reason = NotApplicable, why
		return res, false
	}
	a, err := newArena(s.Setup)
	if err != nil {
		res.Outcome, res.Reason = Error, err.Error()
		return res, false
	}
	defer a.Close()
	p, why, err := runPolicy(s, ad, o, a)
	switch {
	case err != nil:
		res.Outcome, res.Reason = Error, err.Error()
		return res, false
	case why != "":
		res.Outcome, res.Reason = NotApplicable, why
		return res, false
	}
	steps, params, err := callParams(steps, ad, a, p)
	if err != nil {
		res.Outcome, res.Reason = Error, err.Error()
		return res, false
	}
	r = &run{s: s, a: a, expect: ad.Expect(p), patience: ad.Expect(p), bin: o.Binary, sighted: make([]atomic.Bool, len(steps)), steps: steps, ad: ad}
	r.expect.Sessions, r.expect.SessionKey = sessionCap(ad, p)
	r.patience.Sessions, r.patience.SessionKey = r.expect.Sessions, r.expect.SessionKey
	if sr, ok := ad.(Sessioner); ok {
		r.spare = sr.Spare(p)
	}
	if o.expect != nil {
		o.expect(&r.expect)
	}
	// A policy with a sandbox per session is served over HTTP: every call in a session (sessions.go).
	a.httpServe = r.patience.Sessions > 0
	if err := a.start(ctx, o.Binary, p, testhooks.StandInsEnv(a.StandIns())...); err != nil {
		res.Outcome, res.Reason = Error, err.Error()
		return res, false
	}
	ds := s.DetectorsFor(ad.Offer())
	r.baseline(ctx, ad, p, ds, steps)
	if err := r.runSteps(ctx, ds, steps, params); err != nil {
		res.Outcome, res.Reason = Error, err.Error()
		return res, false
	}
	if o.inject != nil {
		o.inject(a)
	}
	r.settleSessions()
	for _, name := range withAlwaysOn(ds) {
		breach, detail := detectors[name].check(r)
		res.Findings = append(res.Findings, Finding{Detector: name, Breach: breach, Detail: detail})
	}
	r.verdict(&res, steps)
	return res, false
}

// applicable is the scenario's steps for the policy's scheme, or why it does not apply there:
// the scheme skips it, it needs a host list the policy lacks, or the policy cannot express a step.
func applicable(s *Scenario, ad Adapter, o Options) ([]Step, string) {
	steps, why := s.StepsFor(ad.Offer())
	if why != "" {
		return nil, why
	}

	// Network-by-name scenarios need a host list; a control's weakening may make one (or open
	// the network, to show a bypass is seen), so controls decide after their mutation (runPolicy).
	if s.NeedsHostList && o.mutate == nil && !hostList(o.Policy) {
		return nil, needsHostList(o.Policy)
	}
	// They also need the stand-in hosts, which only a test build's serve can reach: a release
	// build says so rather than calling the scenario contained.
	if s.NeedsHostList && !testhooks.Build {
		return nil, testhooks.NeedsTestBuild
	}
	// Session scenarios need a policy with a sandbox per session; a control may make one.
	if n, _ := sessionCap(ad, o.Policy); s.NeedsSessions && o.mutate == nil && n == 0 {
		return nil, needsSessions(o.Policy)
	}
	// A scenario this policy cannot express is n/a, not contained: say so before building an arena.
	for _, st := range steps {
		var na *NotApplicableError
		if _, err := ad.Params(st, &Arena{}, o.Policy); errors.As(err, &na) {
			return nil, na.Why
		}
	}
	return steps, ""
}

// runPolicy is the policy this run serves: the options' policy with the timeout capped, prepared
// by the adapter for the arena, the stand-in hosts listed, and a control's mutation applied; or
// why the scenario does not apply to it after all.
func runPolicy(s *Scenario, ad Adapter, o Options, a *Arena) (*policy.Policy, string, error) {
	p := o.Policy.Clone()
	if o.MaxTimeout > 0 && p.Limits.Timeout.Duration > o.MaxTimeout {
		p.Limits.Timeout.Duration = o.MaxTimeout
	}
	if err := ad.Prepare(p, a); err != nil {
		return nil, "", err
	}
	// A host list gets the stand-in hosts (allowed, rebind) beside what the user listed; serve
	// maps their names with the stand-in hook, so no name resolves to anything off this host.
	// A release build has no hook: the policy stays as the user wrote it.
	if testhooks.Build && hostList(p) {
		if err := a.ListStandIns(p); err != nil {
			return nil, "", fmt.Errorf("list the egress stand-ins: %w", err)
		}
	}
	if o.mutate != nil {
		if err := o.mutate(p, a); err != nil {
			return nil, "", err
		}
	}
	if s.NeedsHostList && !hostList(p) && !(o.mutate != nil && networkOpen(p)) {
		return nil, needsHostList(p), nil
	}
	if n, _ := sessionCap(ad, p); s.NeedsSessions && n == 0 {
		return nil, needsSessions(p), nil
	}
	return p, "", nil
}

// callParams gives each step a fresh start token and translates it into its tool call. The tokens
// are made now, after the n/a probe and the scenario's text: nothing written before the run can
// know them.
func callParams(steps []Step, ad Adapter, a *Arena, p *policy.Policy) ([]Step, []*mcp.CallToolParams, error) {
	steps = slices.Clone(steps)
	for i := range steps {
		steps[i].Start = NewStartToken()
	}
	params := make([]*mcp.CallToolParams, len(steps))
	for i, st := range steps {
		var err error
		if params[i], err = ad.Params(st, a, p); err != nil {
			return nil, nil, err
		}
		// An adapter that found no room for the token (a pinned program run as is) leaves it
		// out of the call: the step is then proven by its exit status, output or processes.
		if b, _ := json.Marshal(params[i].Arguments); !strings.Contains(string(b), steps[i].Start.A) {
			steps[i].Start = StartToken{}
		}
	}
	return steps, params, nil
}

// baseline records what the detectors compare against, once the server runs and before any step.
func (r *run) baseline(ctx context.Context, ad Adapter, p *policy.Policy, ds []string, steps []Step) {
	if slices.Contains(ds, "wall_time") && len(steps) > 0 {
		// before the snapshot: whatever a trivial call leaves is the baseline, not the attack's
		r.calibrate(ctx, ad, p, steps[0])
	}
	r.outsideBefore = r.a.SnapshotOutside()
	if slices.Contains(ds, "persistence") {
		r.protect = persistPatterns(ad.Expect(p).Protect)
		r.hostRunBefore = hostRunFiles(r.a.WS, r.protect)
		r.gitExecBefore = gitExecLines(r.a.WS)
	}
}

// runSteps makes the calls while the detectors ds watch (egress always), and stops the watchers
// after the last. A step after the server was killed is an error.
func (r *run) runSteps(ctx context.Context, ds []string, steps []Step, params []*mcp.CallToolParams) error {
	wctx, stopWatch := context.WithCancel(ctx)
	var watchers sync.WaitGroup
	watch := func(f func(context.Context)) {
		watchers.Add(1)
		go func() { defer watchers.Done(); f(wctx) }()
	}
	watch(r.watchEgress)
	for _, w := range []struct {
		detector string
		watch    func(context.Context)
	}{
		{"memory", r.sampleMemory},
		{"sibling", r.watchSibling},
		{"survivors", r.watchCgroups}, // named by the scenario, not only always on
		{"netns", r.watchNetns},
		{"processes", r.countProcesses},
		{"listen", r.watchListen},
		{"session_process", r.watchSessionProcess},
	} {
		if slices.Contains(ds, w.detector) {
			watch(w.watch)
		}
	}
	for _, b := range batches(steps) {
		if r.a.killed.Load() {
			stopWatch()
			return fmt.Errorf("step %d comes after the server was killed", b[0])
		}
		var wg sync.WaitGroup
		for _, i := range b {
			wg.Add(1)
			go func() { defer wg.Done(); r.step(ctx, i, steps[i], params[i]) }()
		}
		wg.Wait()
	}
	stopWatch()
	watchers.Wait()
	return nil
}

// verdict decides the outcome from the findings: ERROR when a call failed at the protocol level,
// the server crashed or a step cannot prove it started; else BREACH when a detector saw one, or
// CONTAINED.
func (r *run) verdict(res *Result, steps []Step) {
	a := r.a
	// A crash or a call the harness could not read leaves the verdict unproven: ERROR, never
	// BREACH, whatever a detector saw (a crashed server answers no tools/list).
	for _, c := range r.calls {
		if c.err != nil && !a.killed.Load() && !c.abandoned {
			res.Outcome, res.Reason = Error, "a call failed at the protocol level: "+c.err.Error()+"; server said: "+a.stderr.Tail()
			return
		}
	}
	if why := a.vanished(); why != "" && !mutated("harness-arena-vanished-passes") {
		res.Outcome, res.Reason = Error, why
		return
	}
	if !a.killed.Load() && a.serverExited() {
		res.Outcome, res.Reason = Error, "the server exited during the run (a crash is an ERROR, not a breach); server said: "+a.stderr.Tail()
		return
	}
	// Every step must prove it started: quiet detectors after a step that never acted prove
	// nothing. A breach stands whatever the proofs say (they can only turn CONTAINED into ERROR).
	res.Started, r.unsure = r.startProofs(steps, r.unsure)
	for _, c := range r.calls {
		if w := c.res.Workspace; w != nil {
			for _, ref := range w.Refused {
				res.Workspace = append(res.Workspace, fmt.Sprintf("step %d: %s: %s", c.step, ref.Path, ref.Why))
			}
			if w.Discarded != "" {
				res.Workspace = append(res.Workspace, fmt.Sprintf("step %d: discarded: %s", c.step, w.Discarded))
			}
		}
	}
	switch {
	case len(res.Breached()) > 0:
		res.Outcome = Breach
	case len(r.unsure) > 0:
		res.Outcome, res.Reason = Error, strings.Join(r.unsure, "; ")
	default:
		res.Outcome = Contained
	}
}

// step runs one step (Parallel copies at once) and records every call.
func (r *run) step(ctx context.Context, i int, st Step, p *mcp.CallToolParams) {
	n := max(1, st.Parallel)
	var wg sync.WaitGroup
	if st.Start.IsZero() || st.KillServerAfter.Duration > 0 {
		// No token can come back from this step (a pinned program prints what it prints; a
		// killed server returns nothing): watch for its processes from the host instead.
		before := map[int]bool{}
		for _, pid := range procsOf(r.a) {
			before[pid] = true
		}
		sctx, stop := context.WithCancel(ctx)
		defer stop()
		go r.watchStart(sctx, i, before)
	}
	if st.FillCap {
		// One session after another, each kept open, up to the cap and one past it.
		for k := range r.patience.Sessions + 1 {
			name, _ := stepSession(i, k, st)
			c := r.call(ctx, i, st, p, name)
			c.sandboxes, c.countErr = r.countSandboxes(ctx) // as this session's call left them (session_cap)
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
		}
		return
	}
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name, ephemeral := stepSession(i, k, st)
			if ephemeral {
				defer r.a.endSession(name) // its own session ends with its call
			}
			c := r.call(ctx, i, st, p, name)
			if n == 1 && timedOutBeforeActing(c, st) && ctx.Err() == nil {
				// The step's code never ran (its token never came back: a cold container or an
				// interpreter a loaded machine did not start in time), so it left nothing behind:
				// try it once more before calling the scenario unproven.
				c.retried = true
				r.mu.Lock()
				r.calls = append(r.calls, c)
				r.mu.Unlock()
				c = r.call(ctx, i, st, p, name)
				c.secondTry = true
			}
			r.mu.Lock()
			r.calls = append(r.calls, c)
			r.mu.Unlock()
		}()
	}
	wg.Wait()
}

func (r *run) call(ctx context.Context, i int, st Step, p *mcp.CallToolParams, session string) call {
	bound, why := r.callBound(r.expect, st.Parallel > 1)
	patience, _ := r.callBound(r.patience, st.Parallel > 1)
	cctx, cancel := context.WithTimeout(ctx, max(bound, patience)+time.Second)
	defer cancel()
	if st.KillServerAfter.Duration > 0 {
		// The clock starts when a process of the step is seen running (a cold container or a
		// loaded machine may take seconds to start it): killing the server before then would
		// test nothing. Never seen within the call's bound: killed then, and judged unstarted.
		kctx, stop := context.WithCancel(cctx)
		defer stop()
		go func() {
			seen := time.NewTimer(bound)
			defer seen.Stop()
			for !r.sighted[i].Load() {
				select {
				case <-kctx.Done():
					return
				case <-seen.C:
					r.a.kill()
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
			select {
			case <-kctx.Done():
			case <-time.After(st.KillServerAfter.Duration):
				r.a.kill()
			}
		}()
	}
	cs, err := r.a.sessionFor(cctx, session)
	if err != nil {
		return call{err: err, bound: bound, boundWhy: why, step: i, session: session}
	}
	start := time.Now()
	res, err := cs.CallTool(cctx, p)
	c := call{dur: time.Since(start), err: err, bound: bound, boundWhy: why, step: i, session: session}
	r.noteCgroupsAtReturn(start.Add(c.dur))
	if err != nil {
		c.abandoned = cctx.Err() != nil && ctx.Err() == nil
		return c
	}
	c.isError = res.IsError
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			c.text += tc.Text
		}
	}
	c.rawText = len(c.text)
	if res.StructuredContent != nil {
		c.structured = true
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &c.res)
	}
	return c
}

// alwaysOn run after every scenario, whatever it names: the host still answers, and nothing
// the calls started outlives them.
var alwaysOn = []string{"survivors", "responsive"}

func withAlwaysOn(ds []string) []string {
	out := slices.Clone(ds)
	for _, d := range alwaysOn {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return out
}
