package allowlist

import (
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial37 F9: "run a program that is not pinned ... but: "python" is allowlisted" left node
// out; every interpreter is named, and the row says its scenarios attack what holds.
func TestExplainNamesEveryInterpreter(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "go", Path: "/usr/local/go/bin/go"}, {Name: "python", Path: "/w/.venv/bin/python"}, {Name: "node", Path: "/usr/bin/node"}}
	layers := []executor.Layer{{Name: sa.LayerPinnedExec, Active: true}, {Name: sa.LayerLandlockFS, Active: true}}
	ts, err := verify.Explain(p, layers, Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	th := ts[0]
	if th.Threat != "run a program that is not pinned" || th.Status != verify.NotEnforced ||
		th.Note != `"python", "node" are allowlisted and run any code they are given, and through the ELF interpreter (ld.so PROGRAM) any program installed on this host` {
		t.Fatalf("row: %+v", th)
	}
	if !strings.Contains(th.Attacks, "the gap is the policy's choice (above): planted-script-interpreter, loader-exec go through it (expect BREACH") ||
		!strings.Contains(th.Attacks, "the rest attack what still holds (pinned exec, landlock: filesystem): expect them CONTAINED") {
		t.Errorf("what the scenarios attack: %q", th.Attacks)
	}
	alsec.Of(p).Commands = alsec.Of(p).Commands[:2]
	ts, _ = verify.Explain(p, layers, Scheme.Threats)
	if ts[0].Note != `"python" is allowlisted and runs any code it is given, and through the ELF interpreter (ld.so PROGRAM) any program installed on this host` {
		t.Errorf("one: %q", ts[0].Note)
	}
}

// trial37 F9: planted-script-interpreter ("python3", payload.py) was N/A for a policy
// allowlisting a venv's python named "python": an argv step naming an interpreter runs
// through the allowlisted one of its kind, as python steps do; another program stays N/A.
func TestArgvStepRunsThroughTheAllowlistedInterpreter(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "python", Path: "/w/.venv/bin/python"}}
	a := &harness.Arena{WS: "/w", Outside: "/o", Tag: "T"}
	c, err := (adapter{}).Params(harness.Step{Argv: []string{"python3", "payload.py"}}, a, p)
	if err != nil {
		t.Fatalf("python3 step with python allowlisted: %v", err)
	}
	if args := c.Arguments.(map[string]any); args["command"] != "python" || args["args"].([]string)[0] != "payload.py" {
		t.Fatalf("call %+v", args)
	}
	if _, err := (adapter{}).Params(harness.Step{Argv: []string{"wc", "x"}}, a, p); err == nil {
		t.Fatal("wc is not allowlisted: the step is n/a")
	}
}
