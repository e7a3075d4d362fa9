package harness

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Adapter is how one scheme's tools express the neutral steps. Adding a scheme to the harness
// means adding an adapter; the scenarios stay as they are.
type Adapter interface {
	// Offer is what the scheme offers the scenarios (the concepts they need: which apply) and
	// how its tools express those whose neutral steps they cannot (its scenarios.toml).
	Offer() *Offer
	// Prepare points the run's copy of the policy at the arena: its workspace and its own
	// audit log. Every other key stays as the user wrote it.
	Prepare(p *policy.Policy, a *Arena) error
	// Params turns a step into a tool call, or returns a *NotApplicableError when this policy has no
	// tool that can say it (an argv step naming a program the allowlist does not hold).
	Params(st Step, a *Arena, p *policy.Policy) (*mcp.CallToolParams, error)
	// Expect is what the policy promises, for the detectors.
	Expect(p *policy.Policy) Expect
}

// Readier is an Adapter that can say, once before any scenario runs, why it cannot attack its
// scheme in this build or environment (the e2b adapter offline in a release build, or live
// without a key): Run then returns that error instead of an ERROR for every scenario.
type Readier interface {
	Ready(p *policy.Policy) error
}

// OptInError is a Readier's answer when the harness attacks its scheme here only if the user
// opts in (the e2b adapter in a release build: its attacks run in a real E2B sandbox on the
// user's account). verify reports the harness as not run, not as a failure of the policy; the
// harness command fails with it, since nothing was attacked.
type OptInError struct {
	Why  string // why the harness does not run by itself ("e2b's attacks run in …")
	How  string // how to opt in, and what it costs ("set … to run them (it uses sandbox time)")
	Else string // another way, for the harness command's error only (a test build's); "" = none
}

func (e *OptInError) Error() string {
	s := e.Why + "; " + e.How
	if e.Else != "" {
		s += "; " + e.Else
	}
	return s
}

// Noticer is an Adapter with something the user must know before its attacks start (the e2b
// adapter live: they use sandbox time on the user's E2B account). Run passes it to
// Options.Notice once, after Ready.
type Noticer interface {
	Notice(p *policy.Policy) string
}

// NotApplicableError says a step cannot be expressed under this policy: the scenario is N/A,
// never "contained".
type NotApplicableError struct{ Why string }

func (n *NotApplicableError) Error() string { return n.Why }

// Inapplicable builds a NotApplicableError.
func Inapplicable(format string, args ...any) error {
	return &NotApplicableError{Why: fmt.Sprintf(format, args...)}
}

// ExpandAny expands the arena's placeholders in a tool-argument value of any JSON shape.
func ExpandAny(a *Arena, v any) any {
	switch x := v.(type) {
	case string:
		return a.Expand(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = ExpandAny(a, x[i])
		}
		return out
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[k] = ExpandAny(a, e)
		}
		return out
	}
	return v
}
