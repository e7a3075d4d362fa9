package harness

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sessions of one serve. A policy that keeps a sandbox per MCP session (docker.reuse =
// "session") makes the session, not the call, the unit of isolation: the threat is another
// session of the same server (another client, another agent) reading or touching what this one
// keeps. So under such a policy the harness starts serve over streamable HTTP (a loopback port
// and a bearer token, as a client would reach it) and makes every call in a session:
//
//   - a step naming a session (session = "a") is made in that session, opened at its first
//     step and kept until the scenario's steps are over; steps naming the same session share it;
//   - a step naming none gets a session of its own, ended (HTTP DELETE) as soon as its calls
//     returned: each such call is its own sandbox, as each call is under a per-call policy, so
//     every other scenario keeps its meaning (state a call leaves, processes that outlive it);
//   - steps with concurrent = true run at the same time as their neighbours that say so too;
//   - a fill_cap step is made in as many fresh sessions as the policy's cap allows, then once
//     more: that last session must be refused, naming the policy key (session_cap).
//
// Every session is ended before the detectors judge, so survivors and the cgroup watch hold the
// sessions to what they hold a call to: nothing may outlive its sandbox's end.

// Sessioner is an Adapter whose scheme can keep a sandbox per MCP session.
type Sessioner interface {
	// SessionCap is how many sessions of one serve may hold a sandbox at once under p, and the
	// policy key that says so (0: p keeps no state per session; every call is its own sandbox).
	SessionCap(p *policy.Policy) (int, string)
	// Sandboxes lists the sandboxes of the serve with this pid still running, seen from
	// outside (the engine's list of containers by their labels), for session_sandboxes.
	Sandboxes(ctx context.Context, serverPID int) ([]string, error)
	// Spare is how many sandboxes p keeps started ahead besides the sessions' (a pool), which
	// Sandboxes lists with them.
	Spare(p *policy.Policy) int
}

// sessionDetectors decide only scenarios that need sessions; a scheme without sessions has
// nothing for them to watch (and no control can fire them there).
var sessionDetectors = []string{"session_leak", "session_process", "session_cap", "session_sandboxes"}

// SessionDetector reports whether detector d judges sessions of one serve (only a scheme with a
// Sessioner adapter can fire it).
func SessionDetector(d string) bool { return slices.Contains(sessionDetectors, d) }

func init() {
	for _, d := range []Detector{
		{"session_leak", "the run's session secret (given only to the sessions whose steps spell it) in anything another session's call returned", checkSessionLeak},
		{"session_process", "a process carrying the session secret, seen running on the host during the calls, still alive when its session ends (no other session killed it)", checkSessionProcess},
		{"session_cap", "the session past the policy's cap (fill_cap) refused by policy naming the cap's key, or served with the sandboxes counted from outside within the cap (an idle one gave way); the sessions within it served", checkSessionCap},
		{"session_sandboxes", "after the scenario SIGKILLed serve, no sandbox labelled with serve's pid still running 30s later (listed from outside, by label)", checkSessionSandboxes},
	} {
		detectors[d.Name] = d
	}
}

// checkSessions: session keys belong to scenarios that need sessions, and those name sessions
// in their neutral steps (if they have any: a scheme's own steps are checked with its offer).
func (pr *problems) checkSessions(s *Scenario) {
	pr.checkSessionUse("", s.NeedsSessions, s.Steps, s.Detectors)
}

// checkSessionUse: steps (a scenario's, or a scheme's own for it) and detectors use sessions iff
// the scenario needs sessions.
func (pr *problems) checkSessionUse(where string, needs bool, steps []Step, ds []string) {
	named := slices.ContainsFunc(steps, func(st Step) bool { return st.Session != "" })
	switch {
	case needs && len(steps) > 0 && !named:
		pr.bad("%sneeds sessions: name the sessions the steps are made in (session = \"a\")", where)
	case !needs && (named || slices.ContainsFunc(ds, SessionDetector)):
		pr.bad("%ssession names and session_* detectors need needs = [..., \"sessions\"] (the scenario is n/a where a policy keeps no state per session)", where)
	}
}

// sessionCap is the adapter's cap for p (0: no sessions, or an adapter without them).
func sessionCap(ad Adapter, p *policy.Policy) (int, string) {
	if s, ok := ad.(Sessioner); ok {
		return s.SessionCap(p)
	}
	return 0, ""
}

// needsSessions is why a scenario that needs sessions does not apply to p.
func needsSessions(p *policy.Policy) string {
	return fmt.Sprintf("needs a policy that keeps a sandbox per MCP session (the %s scheme's policy keeps none: each call is its own sandbox)", p.Scheme)
}

// harnessToken is the bearer token of a serve the harness runs over HTTP (loopback only).
var harnessToken = sync.OnceValue(func() string { return "mcpsandbox-harness-" + randHex(16) })

var urlRe = lazy.Regexp(`url=(http://\S+/mcp)`)

// startHTTP starts `serve --http 127.0.0.1:0` with the harness's token and opens the arena's
// own session (a.cs: tools/list for the responsive detector, the calibration calls).
func (a *Arena) startHTTP(ctx context.Context, bin string, env []string) error {
	a.srv = exec.Command(bin, "serve", "--policy", a.policyPath, "--log-level", "info", "--http", "127.0.0.1:0")
	a.srv.Env = append(env, "MCPSANDBOX_TOKEN="+harnessToken())
	a.stderr = &lockedBuffer{}
	a.srv.Stderr = a.stderr
	// over stdio serve ends at its stdin's end, which a harness killed outright closes; over
	// HTTP it reads no stdin: its parent's death must end it (startTied)
	if err := startTied(a.srv); err != nil {
		return fmt.Errorf("start `%s serve --policy %s --http`: %w", bin, a.policyPath, err)
	}
	exited := make(chan struct{})
	go func() { a.srv.Wait(); close(exited) }()
	a.closers = append(a.closers, func() {
		a.srv.Process.Signal(sigTerm)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			a.srv.Process.Kill()
			<-exited
		}
	})
	for deadline := time.Now().Add(30 * time.Second); a.url == ""; time.Sleep(50 * time.Millisecond) {
		a.stderr.mu.Lock()
		m := urlRe().FindStringSubmatch(a.stderr.b.String())
		a.stderr.mu.Unlock()
		select {
		case <-exited:
			return fmt.Errorf("`%s serve --http` exited before it listened; server said: %s", bin, a.stderr.Tail())
		default:
		}
		if m != nil {
			a.url = m[1]
		} else if time.Now().After(deadline) {
			return fmt.Errorf("`%s serve --http` printed no URL within 30s; server said: %s", bin, a.stderr.Tail())
		}
	}
	cs, err := a.connect(ctx)
	if err != nil {
		return err
	}
	a.cs = cs
	return nil
}

type bearer struct{}

func (bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+harnessToken())
	return http.DefaultTransport.RoundTrip(r)
}

// connect opens a new MCP session of the arena's HTTP serve.
func (a *Arena) connect(ctx context.Context) (*mcp.ClientSession, error) {
	cctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "mcpsandbox-harness", Version: "1"}, nil).Connect(cctx,
		&mcp.StreamableClientTransport{Endpoint: a.url, HTTPClient: &http.Client{Transport: bearer{}}, MaxRetries: -1, DisableStandaloneSSE: true}, nil)
	if err != nil {
		return nil, fmt.Errorf("open an MCP session of `serve --http` at %s: %w; server said: %s", a.url, err, a.stderr.Tail())
	}
	return cs, nil
}

// sessionFor is the client session a call of the named session is made in: the arena's own
// (stdio) when serve runs over stdio, else the named session, opened at its first call.
func (a *Arena) sessionFor(ctx context.Context, name string) (*mcp.ClientSession, error) {
	if a.url == "" {
		return a.cs, nil
	}
	a.sessMu.Lock()
	defer a.sessMu.Unlock()
	if cs := a.sessions[name]; cs != nil {
		return cs, nil
	}
	cs, err := a.connect(ctx)
	if err != nil {
		return nil, err
	}
	if a.sessions == nil {
		a.sessions = map[string]*mcp.ClientSession{}
	}
	a.sessions[name] = cs
	return cs, nil
}

// endSession ends one named session (HTTP DELETE); a session never opened is no error.
func (a *Arena) endSession(name string) {
	a.sessMu.Lock()
	cs := a.sessions[name]
	delete(a.sessions, name)
	a.sessMu.Unlock()
	if cs != nil {
		cs.Close()
	}
}

// endSessions ends every session the steps opened (not the arena's own).
func (a *Arena) endSessions() {
	a.sessMu.Lock()
	var names []string
	for n := range a.sessions {
		names = append(names, n)
	}
	a.sessMu.Unlock()
	var wg sync.WaitGroup
	for _, n := range names {
		wg.Add(1)
		go func() { defer wg.Done(); a.endSession(n) }()
	}
	wg.Wait()
}

// ServerPID is the pid of the started serve (0 before Start).
func (a *Arena) ServerPID() int {
	if a.srv == nil || a.srv.Process == nil {
		return 0
	}
	return a.srv.Process.Pid
}

// OnClose runs f when the arena closes (a control's staged evidence, removed again).
func (a *Arena) OnClose(f func()) { a.closers = append(a.closers, f) }

// SessionSecret is the run's session secret ({{session_secret}}).
func (a *Arena) SessionSecret() string { return a.sessionSecret }

// KillSessionProcesses SIGKILLs, from the host, every process whose argv carries the session
// secret, as another session able to signal them would: the session_process detector's
// control. It says how many it killed, once they are gone (a SIGKILL takes effect when the
// process next runs: on a loaded machine, a moment later), or 5s have passed.
func (a *Arena) KillSessionProcesses() int {
	var killed []int
	for _, pid := range pidsCarrying(a.sessionSecret) {
		if p, err := os.FindProcess(pid); err == nil && p.Kill() == nil {
			killed = append(killed, pid)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if !slices.ContainsFunc(killed, func(p int) bool { return !gone(p) }) {
			break
		}
	}
	return len(killed)
}

// stepSession is the session step i's copy k is made in: its own name, or one of its own.
func stepSession(i, k int, st Step) (name string, ephemeral bool) {
	switch {
	case st.FillCap:
		return fmt.Sprintf("%s-%d", st.Session, k+1), false
	case st.Session != "":
		return st.Session, false
	}
	return fmt.Sprintf("step-%d-%d", i, k), true
}

// batches groups the steps: a run of adjacent concurrent steps is one batch, every other step
// one of its own.
func batches(steps []Step) [][]int {
	var out [][]int
	for i, st := range steps {
		if st.Concurrent && i > 0 && steps[i-1].Concurrent {
			out[len(out)-1] = append(out[len(out)-1], i)
			continue
		}
		out = append(out, []int{i})
	}
	return out
}

// settleSessions ends every session the steps opened, after the session_process detector's
// last look, and waits (at most 20s: an engine removing containers on a loaded machine) until
// no process of the calls is left, so the survivors detector's own 3s start from the end of
// the sandboxes, as they start from a call's end under a per-call policy.
func (r *run) settleSessions() {
	if r.a.url == "" {
		return
	}
	r.sessionProcessLastLook()
	r.a.endSessions()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if len(procsOf(r.a)) == 0 && !r.cgroupsHold() {
			return
		}
	}
}

// cgroupsHold reports whether a cgroup that held the calls' processes still holds some.
func (r *run) cgroupsHold() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for d := range r.cgroups {
		if len(cgroupProcs(d)) > 0 {
			return true
		}
	}
	return false
}

// pidsCarrying lists host pids whose argv carries s.
func pidsCarrying(s string) []int {
	if s == "" {
		return nil
	}
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && strings.Contains(string(b), s) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// watchSessionProcess records, every 100ms until ctx ends, the processes carrying the session
// secret (the owning session's background process, seen from the host).
func (r *run) watchSessionProcess(ctx context.Context) {
	for {
		if pids := pidsCarrying(r.a.sessionSecret); len(pids) > 0 {
			r.mu.Lock()
			if r.secretSeen == nil {
				r.secretSeen = map[int]bool{}
			}
			for _, p := range pids {
				r.secretSeen[p] = true
			}
			r.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// sessionProcessLastLook is the session_process detector's reading, taken after every step and
// before the sessions end: which of the processes seen carrying the secret are still alive.
func (r *run) sessionProcessLastLook() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.secretLooked = true
	r.secretAlive = nil
	for p := range r.secretSeen {
		// the same process: not gone, and still carrying the secret (a pid the host reused does not)
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p)); err == nil && !gone(p) && strings.Contains(string(b), r.a.sessionSecret) {
			r.secretAlive = append(r.secretAlive, p)
		}
	}
	slices.Sort(r.secretAlive)
}

func checkSessionProcess(r *run) (bool, string) {
	r.mu.Lock()
	seen, alive, looked := len(r.secretSeen), len(r.secretAlive), r.secretLooked
	r.mu.Unlock()
	switch {
	case !looked:
		r.inconclusive("session_process: the sessions were not looked at before they ended (serve runs over stdio: the policy keeps no sandbox per session)")
		return false, "not judged"
	case seen == 0:
		r.inconclusive("session_process: no process carrying the session secret was ever seen running, so no other session's reach to it was tested")
		return false, "no process carrying the session secret was seen"
	case alive == 0:
		return true, fmt.Sprintf("the %d process(es) carrying the session secret died before their session ended: another session's calls killed them", seen)
	}
	r.mu.Lock()
	var what []string
	for _, p := range r.secretAlive {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", p))
		what = append(what, fmt.Sprintf("%d (%s)", p, clip(strings.ReplaceAll(string(b), "\x00", " "), 80)))
	}
	r.mu.Unlock()
	return false, fmt.Sprintf("%d of %d process(es) carrying the session secret alive when their session ended: %s", alive, seen, strings.Join(what, ", "))
}

// secretOwners are the sessions whose steps spell the session secret.
func secretOwners(steps []Step) map[string]bool {
	own := map[string]bool{}
	for i, st := range steps {
		if strings.Contains(stepText(st), "{{session_secret}}") {
			n, _ := stepSession(i, 0, st)
			own[n] = true
		}
	}
	return own
}

func stepText(st Step) string {
	return strings.Join(st.Argv, " ") + st.Python + st.Shell + fmt.Sprint(st.Arguments)
}

func checkSessionLeak(r *run) (bool, string) {
	sec := r.a.sessionSecret
	own := secretOwners(r.steps)
	r.a.stagedMu.Lock()
	staged := strings.Join(r.a.staged, "")
	r.a.stagedMu.Unlock()
	if strings.Contains(staged, sec) {
		return true, "the session secret came back in output made outside the owning session"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	others := 0
	for _, c := range r.calls {
		if own[c.session] {
			continue
		}
		others++
		if strings.Contains(c.text+c.res.Stdout+c.res.Stderr, sec) {
			return true, fmt.Sprintf("session %q's call (step %d) returned the secret only session(s) %v were given", c.session, c.step, keys(own))
		}
	}
	if others == 0 || len(own) == 0 {
		r.inconclusive("session_leak: the scenario has no call outside the sessions owning the secret (or no owner): nothing to judge")
	}
	return false, fmt.Sprintf("%d call(s) of other sessions returned nothing of session(s) %v", others, keys(own))
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func checkSessionCap(r *run) (bool, string) {
	limit, key := r.expect.Sessions, r.expect.SessionKey
	if limit <= 0 {
		r.inconclusive("session_cap: the policy keeps no sandbox per session")
		return false, "not judged"
	}
	r.mu.Lock()
	calls := slices.Clone(r.calls) // not held below: r.inconclusive takes r.mu
	r.mu.Unlock()
	judged, past := false, ""
	for _, c := range calls {
		if !r.steps[c.step].FillCap {
			continue
		}
		var k int
		fmt.Sscanf(strings.TrimPrefix(c.session, r.steps[c.step].Session+"-"), "%d", &k)
		refused := c.err == nil && c.isError && strings.HasPrefix(c.text, refusalPrefix) && strings.Contains(c.text, key)
		switch {
		case k == limit+1 && refused:
			judged = true
		case k == limit+1 && c.structured:
			// Served: as the least recently used idle session gives way (its sandbox removed),
			// which holds the cap, or past it. The engine's count says which.
			breach, why := r.sandboxesWithin(c, limit, key)
			if breach {
				return true, fmt.Sprintf("session %d of %d got a sandbox and %s: the cap (%s = %d) did not hold", k, limit+1, why, key, limit)
			}
			judged, past = why != "", why
		case k == limit+1:
			r.inconclusive(fmt.Sprintf("session_cap: the session past the cap neither ran nor was refused naming %s: %s", key, clip(c.text, 200)))
		case k >= 1 && k <= limit && !c.structured:
			r.inconclusive(fmt.Sprintf("session_cap: session %d of %d (within %s = %d) was not served: %s", k, limit+1, key, limit, clip(c.text, 200)))
		}
	}
	if !judged {
		return false, "no session past the cap was judged"
	}
	if past != "" {
		return false, fmt.Sprintf("the %d sessions within %s = %d were served; session %d was served too, and %s: an idle session's sandbox gave way", limit, key, limit, limit+1, past)
	}
	return false, fmt.Sprintf("the %d sessions within %s = %d were served; session %d was refused naming %s", limit, key, limit, limit+1, key)
}

// countSandboxes counts serve's running sandboxes from outside (a Sessioner's Sandboxes).
func (r *run) countSandboxes(ctx context.Context) (int, error) {
	sr, ok := r.ad.(Sessioner)
	if !ok {
		return 0, errors.New("the adapter cannot count its sandboxes")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	left, err := sr.Sandboxes(ctx, r.a.ServerPID())
	return len(left), err
}

// sandboxesWithin judges the count c left (its own and the sessions' before it, less the Spare
// ones started ahead): at most limit is no breach (why says how many); more is one. Without a
// count, the call is not judged (why "").
func (r *run) sandboxesWithin(c call, limit int, key string) (breach bool, why string) {
	if c.countErr != nil {
		r.inconclusive(fmt.Sprintf("session_cap: the session past %s was served, and its sandboxes could not be counted: %v", key, c.countErr))
		return false, ""
	}
	bound := limit + r.spare
	if c.sandboxes > bound {
		return true, fmt.Sprintf("%d sandboxes ran after its call (at most %d: %d sessions' and %d started ahead)", c.sandboxes, bound, limit, r.spare)
	}
	return false, fmt.Sprintf("%d sandboxes ran after its call (at most %d: %d sessions' and %d started ahead)", c.sandboxes, bound, limit, r.spare)
}

func checkSessionSandboxes(r *run) (bool, string) {
	sr, ok := r.ad.(Sessioner)
	switch {
	case !ok:
		r.inconclusive("session_sandboxes: the scheme's adapter cannot list its sandboxes")
		return false, "not judged"
	case !r.a.killed.Load():
		r.inconclusive("session_sandboxes: the scenario did not kill serve")
		return false, "not judged"
	}
	pid := r.a.ServerPID()
	var left []string
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(250 * time.Millisecond) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		var err error
		left, err = sr.Sandboxes(ctx, pid)
		cancel()
		if err != nil {
			r.inconclusive("session_sandboxes: could not list the sandboxes: " + err.Error())
			return false, "not judged"
		}
		if len(left) == 0 {
			return false, fmt.Sprintf("no sandbox of the killed serve (pid %d) is running", pid)
		}
		if time.Now().After(deadline) {
			return true, fmt.Sprintf("30s after serve (pid %d) was SIGKILLed, %d of its sandboxes still run: %s", pid, len(left), strings.Join(left, ", "))
		}
	}
}

// CallInSession makes a raw tool call in the named session of the arena's serve (opened if the
// steps did not) and returns everything it returned as text: a control's evidence, the same
// probe another session ran, run where the state it looks for is.
func (a *Arena) CallInSession(ctx context.Context, name, tool string, args map[string]any) (string, error) {
	cs, err := a.sessionFor(ctx, name)
	if err != nil {
		return "", err
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("call %s in session %s: %w", tool, name, err)
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.StructuredContent != nil {
		fmt.Fprint(&b, res.StructuredContent)
	}
	return b.String(), nil
}
