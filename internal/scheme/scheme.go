// Package scheme says what an isolation scheme is: one value holding everything the scheme
// contributes to serve, explain, verify and the harness. The schemes themselves, and the
// registry that lists them, live under schemes/.
package scheme

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"slices"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Scheme is one isolation scheme.
type Scheme struct {
	Name    string // policy.SchemeX
	Summary string // one line for help texts and the wizard
	// Executor builds the scheme's executor for a policy. It is nil when the scheme cannot
	// run in this build or on this OS; Unavailable then says why, in words for the user.
	Executor    func(p *policy.Policy, o ExecOptions) (executor.Executor, error)
	Unavailable string
	// Layers lists the layer IDs the executor reports (its exported constants).
	Layers []string
	// Threats is explain's table for the scheme.
	Threats []verify.ThreatRule
	// Audit is the scheme's part of verify's static audit.
	Audit verify.Auditor
	// Adapter is how the harness's neutral steps become this scheme's tool calls (nil: the
	// harness cannot attack the scheme in this build).
	Adapter harness.Adapter
	// Controls are the negative controls, run against ControlPolicy.
	Controls      func() []harness.Control
	ControlPolicy func() (*policy.Policy, error)
	// Default builds the scheme's built-in policy (for --default); workspace "" means a fresh
	// temporary directory, which cleanup removes (cleanup is never nil). Nil: the scheme has no
	// built-in policy.
	Default func(workspace string) (p *policy.Policy, cleanup func(), err error)
	// Wizard is the scheme's part of init: its blurb, its own answers (init's flags, the
	// wizard's questions, how they become its section, what init makes on the host). Nil: init
	// does not offer the scheme.
	Wizard *generate.Wizard
	// Needs checks what init's answers need of this host before anything is written (an
	// engine, an image, a key in the environment); nil: nothing beyond serve itself.
	Needs func(ctx context.Context, a *generate.Answers, pr Prompt) error
	// Proof is the trivial tool call init makes through the entry it writes, with the
	// environment each client gives it (an entry that starts but cannot run a call is never
	// written); nil: init checks that the entry answers MCP only.
	Proof func(p *policy.Policy) *generate.ProofCall
	// ServerEnv names the variables serve needs from the client's environment under a policy
	// (a key): each client's entry names them in its own syntax, never their values; an item
	// NAME=value (not a secret: the docker engine's address) the entry sets to that value. Nil: none.
	ServerEnv func(p *policy.Policy) []string
	// Measured are verify's host rows measured for this policy here (serve's probe of the
	// layers it really gets), given this binary and the policy file; nil: none.
	Measured func(ctx context.Context, self, policyPath string) []verify.Check
	// Host are verify's rows about what this host offers the scheme (its kernel features, its
	// engine), for the doctor part of `verify`; nil: none.
	Host func(ctx context.Context) []verify.Check
	// Bench are the scheme's rows for `go run -tags testhooks ./bench` (a test build's only: the
	// release binary carries no benchmark). Nil: none in this build.
	Bench func(ctx context.Context, b *BenchRun) error
	// Bounds are the scheme's own bounds on what reaches serve (its egress proxy, its
	// upstream), listed by explain after the common ones (verify.Bounds). Nil: none.
	Bounds func(p *policy.Policy) []verify.Bound
	// Relay runs the scheme as a relay to another stdio MCP server (wrap): `serve --policy` and
	// `wrap` call it instead of serving an executor's tools. Nil: the scheme serves its tools.
	Relay func(ctx context.Context, p *policy.Policy, o RelayOptions) error
	// PolicyTemplate is the text/template source of the commented policy file init writes for
	// the scheme (internal/schemes/NAME/policy.toml.tmpl, embedded): .P is the policy (its common keys),
	// .S its section of the scheme (p.Section()), .Path the file's path, and {{template
	// "header" .}} the common part (internal/templates/policy-common.toml.tmpl). The registry hands it
	// to generate.RegisterPolicyTemplate.
	PolicyTemplate string
}

// RelayOptions are what a Relay gets from the command that runs it.
type RelayOptions struct {
	Command        []string // the server's argv from the command line (nil: the policy's)
	ExplainDenials bool     // log refusals and denied hosts to Stderr
	Stdin          io.Reader
	Stdout         io.Writer // the MCP channel: nothing else is written there
	Stderr         io.Writer
	Logger         *slog.Logger
}

// WithoutCleanup adapts a built-in policy that makes nothing to remove to Scheme.Default.
func WithoutCleanup(f func(workspace string) (*policy.Policy, error)) func(string) (*policy.Policy, func(), error) {
	return func(ws string) (*policy.Policy, func(), error) {
		p, err := f(ws)
		return p, func() {}, err
	}
}

// AllBounds are the common bounds and then the scheme's own. A relay (wrap) is not serve's MCP
// server: of the common bounds only the audit log's hold for it (it has no HTTP, its own frame
// limit, and a timeout that answers the call rather than killing a process tree), and its own
// say what it does instead.
func (s *Scheme) AllBounds(p *policy.Policy) []verify.Bound {
	bs := verify.Bounds(p)
	if s.Relay != nil && !mutated("explain-relay-bounds") {
		bs = slices.DeleteFunc(bs, func(b verify.Bound) bool { return b.Boundary != "audit" })
	}
	if s.Bounds != nil {
		bs = append(bs, s.Bounds(p)...)
	}
	return bs
}

// RestartError is a Needs failure that nothing done elsewhere while init waits can fix: what is
// missing is in init's own environment (a variable set in another terminal never reaches it), so
// the wizard offers no "try again", only other answers or quitting.
type RestartError struct{ Err error }

func (e *RestartError) Error() string { return e.Err.Error() }
func (e *RestartError) Unwrap() error { return e.Err }

// RetryUnlikelyError is a Needs failure a retry seldom fixes (a group joined needs a new login):
// the wizard still offers to try again, but preselects choosing another scheme.
type RetryUnlikelyError struct{ Err error }

func (e *RetryUnlikelyError) Error() string { return e.Err.Error() }
func (e *RetryUnlikelyError) Unwrap() error { return e.Err }

// Prompt is how a scheme's Needs talks to the person running init.
type Prompt struct {
	Out         io.Writer // what it reports and shows (a pull's progress)
	Interactive bool      // a terminal answers Confirm
	// Confirm asks a yes/no question; without a terminal it answers "no".
	Confirm func(question string, def bool) (bool, error)
}

// ExecOptions are what serve hands every executor constructor.
type ExecOptions struct {
	Logger *slog.Logger
	// DeferStart: start-up work the executor can postpone (allowlist: the layer probe) waits
	// for its Begin method, which serve's stdio Run calls once initialize and tools/list are
	// answered; Ready and every call begin it too, so nothing that needs it waits longer.
	DeferStart bool
}

// UnavailableError is the one way every command reports a scheme it cannot run here.
type UnavailableError struct {
	Scheme string
	Reason string
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("the %s scheme cannot run in this build on %s/%s: %s", e.Scheme, runtime.GOOS, runtime.GOARCH, e.Reason)
}

// NewExecutor builds the executor, or says plainly why this build cannot.
func (s *Scheme) NewExecutor(p *policy.Policy, o ExecOptions) (executor.Executor, error) {
	if s.Executor == nil {
		return nil, &UnavailableError{Scheme: s.Name, Reason: s.Unavailable}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return s.Executor(p, o)
}

// Runs reports whether serve can run the scheme in this build (an executor, or a relay); if
// not, the error says why.
func (s *Scheme) Runs() error {
	if s.Executor == nil && s.Relay == nil {
		return &UnavailableError{Scheme: s.Name, Reason: s.Unavailable}
	}
	return nil
}
