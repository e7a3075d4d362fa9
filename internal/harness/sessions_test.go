package harness

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const sessBase = "id = \"x\"\ntitle = \"t\"\ncategory = \"persistence\"\nthreat = \"t\"\n"

// The session keys are checked like every other: names are ids, fill_cap needs a named session,
// and session names and detectors belong to scenarios that need sessions (n/a elsewhere).
func TestSessionScenarioErrors(t *testing.T) {
	for _, c := range []struct{ name, text, want string }{
		{"session without needs", sessBase + "needs = [\"commands\"]\ndetectors = [\"leak\"]\n[[steps]]\nsession = \"a\"\nshell = \"x\"\n", `need needs = [..., "sessions"]`},
		{"detector without needs", sessBase + "needs = [\"commands\"]\ndetectors = [\"session_leak\"]\n[[steps]]\nshell = \"x\"\n", `need needs = [..., "sessions"]`},
		{"needs without names", sessBase + "needs = [\"commands\", \"sessions\"]\ndetectors = [\"session_leak\"]\n[[steps]]\nshell = \"x\"\n", "name the sessions"},
		{"bad session name", sessBase + "needs = [\"commands\", \"sessions\"]\ndetectors = [\"leak\"]\n[[steps]]\nsession = \"A b\"\nshell = \"x\"\n", `session "A b"`},
		{"fill_cap without session", sessBase + "needs = [\"commands\", \"sessions\"]\ndetectors = [\"session_cap\"]\n[[steps]]\nsession = \"a\"\nshell = \"x\"\n[[steps]]\nfill_cap = true\nshell = \"x\"\n", "fill_cap needs a session name"},
	} {
		_, err := LoadFS(fstest.MapFS{"x.toml": {Data: []byte(c.text)}})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want it to mention %q", c.name, err, c.want)
		}
	}
	ok := sessBase + "needs = [\"commands\", \"sessions\"]\ndetectors = [\"session_leak\"]\n[[steps]]\nsession = \"a\"\nconcurrent = true\nshell = \"x\"\n[[steps]]\nsession = \"b\"\nconcurrent = true\nshell = \"y\"\n"
	if _, err := LoadFS(fstest.MapFS{"x.toml": {Data: []byte(ok)}}); err != nil {
		t.Errorf("a valid session scenario: %v", err)
	}
}

// Adjacent concurrent steps run as one batch; others alone. Unnamed steps get sessions of their
// own, named ones share theirs, fill_cap numbers its sessions.
func TestBatchesAndStepSessions(t *testing.T) {
	steps := []Step{{}, {Concurrent: true}, {Concurrent: true}, {}, {Concurrent: true}, {Concurrent: true}, {Concurrent: true}}
	got := batches(steps)
	want := [][]int{{0}, {1, 2}, {3}, {4, 5, 6}}
	if !slices.EqualFunc(got, want, slices.Equal[[]int]) {
		t.Errorf("batches = %v, want %v", got, want)
	}
	a0, e0 := stepSession(0, 0, Step{})
	a1, e1 := stepSession(1, 0, Step{})
	b, eb := stepSession(2, 0, Step{Session: "b"})
	c, _ := stepSession(3, 2, Step{Session: "s", FillCap: true})
	if a0 == a1 || !e0 || !e1 || b != "b" || eb || c != "s-3" {
		t.Errorf("sessions %q %v, %q %v, %q %v, %q", a0, e0, a1, e1, b, eb, c)
	}
}

type noSessions struct{}

func (noSessions) Prepare(*policy.Policy, *Arena) error { return nil }
func (noSessions) Params(Step, *Arena, *policy.Policy) (*mcp.CallToolParams, error) {
	return &mcp.CallToolParams{Name: "t"}, nil
}
func (noSessions) Expect(*policy.Policy) Expect { return Expect{} }
func (noSessions) Offer() *Offer {
	return NewOffer("fake", []string{NeedCommands, NeedSessions}, "", nil)
}

// A scenario that needs sessions is n/a (before any serve starts) where the adapter keeps no sandbox
// per session, never contained or an error.
func TestSessionScenarioNotApplicable(t *testing.T) {
	text := sessBase + "needs = [\"commands\", \"sessions\"]\ndetectors = [\"session_leak\"]\n[[steps]]\nsession = \"a\"\nshell = \"x\"\n"
	scs, err := LoadFS(fstest.MapFS{"x.toml": {Data: []byte(text)}})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), scs, Options{Binary: "/nonexistent/mcpsandbox", Policy: policy.Default(alsec.Name), Adapter: noSessions{}})
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Results[0]; r.Outcome != NotApplicable || !strings.Contains(r.Reason, "per MCP session") {
		t.Errorf("%s %q, want n/a", r.Outcome, r.Reason)
	}
}

// The session detectors judge from what the run recorded: a secret in another session's output
// is a breach, in its owner's is not; the session past the cap served is a breach, refused
// naming the key is not.
func TestSessionDetectorsJudge(t *testing.T) {
	a := &Arena{sessionSecret: "SESSIONSECRETabc"}
	steps := []Step{{Session: "a", Shell: "echo {{session_secret}}"}, {Session: "b", Shell: "cat"}}
	r := &run{a: a, steps: steps, calls: []call{{step: 0, session: "a", text: "SESSIONSECRETabc"}, {step: 1, session: "b", text: "nothing"}}}
	if breach, d := checkSessionLeak(r); breach || len(r.unsure) > 0 {
		t.Errorf("owner's own output: %v %q %v", breach, d, r.unsure)
	}
	// Nothing to judge: said, not a hang (a detector holding the run's lock called inconclusive,
	// which took it again: verify never ended, trial34 F1).
	lone := &run{a: a, steps: steps, calls: []call{{step: 0, session: "a", text: "SESSIONSECRETabc"}}}
	done := make(chan struct{})
	go func() { checkSessionLeak(lone); close(done) }()
	select {
	case <-done:
		if len(lone.unsure) == 0 {
			t.Errorf("no call outside the owner's session: judged")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("checkSessionLeak hung on a scenario with nothing to judge")
	}
	r.calls[1].res.Stdout = "found SESSIONSECRETabc"
	if breach, d := checkSessionLeak(r); !breach {
		t.Errorf("b returned a's secret: %v %q", breach, d)
	}
	fill := []Step{{Session: "s", FillCap: true, Shell: "echo"}}
	served := call{step: 0, structured: true}
	refused := call{step: 0, isError: true, text: refusalPrefix + "docker.max_sessions: 2 sessions already"}
	mk := func(last call) *run {
		last.session = "s-3"
		c1, c2 := served, served
		c1.session, c2.session = "s-1", "s-2"
		return &run{a: a, steps: fill, expect: Expect{Sessions: 2, SessionKey: "docker.max_sessions"}, calls: []call{c1, c2, last}}
	}
	if breach, d := checkSessionCap(mk(refused)); breach {
		t.Errorf("refused past the cap: %v %q", breach, d)
	}
	// Served past the cap: a breach when serve's sandboxes then outnumber the cap (the engine's
	// count, less those started ahead), not when an idle session's gave way (atk34 F1).
	over := served
	over.sandboxes = 3
	if breach, d := checkSessionCap(mk(over)); !breach {
		t.Errorf("served past the cap, 3 sandboxes: %v %q", breach, d)
	}
	within := served
	within.sandboxes = 2
	if breach, d := checkSessionCap(mk(within)); breach || !strings.Contains(d, "an idle session's sandbox gave way") {
		t.Errorf("served past the cap, 2 sandboxes: %v %q", breach, d)
	}
	r = mk(over)
	r.spare = 1 // a pool of one: 3 is the cap and it
	if breach, d := checkSessionCap(r); breach {
		t.Errorf("served past the cap, 3 sandboxes with a pool of one: %v %q", breach, d)
	}
	uncounted := served
	uncounted.countErr = errors.New("no engine")
	if r = mk(uncounted); func() bool { b, _ := checkSessionCap(r); return b }() || len(r.unsure) == 0 {
		t.Errorf("served past the cap, not counted: judged, want unsure")
	}
}
