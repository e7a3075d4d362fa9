package wrap

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/hostile"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The harness's side of the scheme: its adapter, its negative controls and their policy. A
// wrapped server has only its own tools, so the scenarios that attack it (internal/scenarios/wrap-*.toml)
// are raw calls of the hostile test server's tools (internal/harness/hostileserver), each judged from
// outside by the harness's detectors.
func init() {
	Scheme.Adapter = adapter{}
	Scheme.Controls = controls
	Scheme.ControlPolicy = controlPolicy
}

// adapter sends a scenario's raw tool calls to the wrapped server.
type adapter struct{}

// offer is what the scheme offers the scenarios' needs: it has no tools of its own: it relays the wrapped server's, confined on this host, with serve's egress proxy.
var offer = harness.NewOffer(wrapsec.Name, []string{harness.NeedRelay, harness.NeedHostEgress, harness.NeedLocalSandbox}, "", nil)

// Offer: which scenarios apply to the scheme, and its own steps for some.
func (adapter) Offer() *harness.Offer { return offer }

// Prepare points the run's audit log at the arena. The server is the policy's [wrap].command,
// as the user wrote it; when the harness is root the workspace goes to the uid the server runs
// as (nobody), so that only the sandbox stands between the server and it.
func (adapter) Prepare(p *policy.Policy, a *harness.Arena) error {
	if len(wrapsec.Of(p).Command) == 0 {
		// A policy init --wrap wrote (the client entry names the server): the attacks run under
		// its settings, with the hostile test server Ready found (the file is not changed).
		bin, err := hostileServer()
		if err != nil {
			return err
		}
		wrapsec.Of(p).Command = []string{bin}
	}
	p.Audit.Path = a.AuditPath()
	if os.Geteuid() != 0 {
		return nil
	}
	if err := a.ChownWorkspace(65534, 65534); err != nil {
		return fmt.Errorf("hand the harness workspace to nobody: %w", err)
	}
	return nil
}

// Ready: a policy whose [wrap].command is unset (what init --wrap writes: the client's entry
// names the server) is attacked under its settings with the hostile test server in its place;
// without one built, the harness is not run (verify: not a failure, the verdict is the audit's
// and the host's), saying how to run it (trial34 F8: 13 ERRORs and a FAIL on every such policy).
func (adapter) Ready(p *policy.Policy) error {
	if len(wrapsec.Of(p).Command) > 0 {
		return nil
	}
	if _, err := hostileServer(); err != nil {
		return &harness.OptInError{
			Why: "this wrap policy leaves the server to its client's entry ([wrap].command unset), and the harness attacks a server it starts itself under the policy: the hostile test server",
			How: "build it from mcpsandbox's source (" + strings.TrimSuffix(buildHint, ", then command = [\"DIR/"+hostile.ServerName+"\"]") + ") and name it in " + HostileServerEnv + "=DIR/" + hostile.ServerName + ": the attacks then run under this policy's settings (the file is not changed)",
		}
	}
	return nil
}

// hostileServer is the hostile test server's binary: MCPSANDBOX_HOSTILE_SERVER, or hostileserver
// on PATH, as an absolute path.
func hostileServer() (string, error) {
	bin := os.Getenv(HostileServerEnv)
	if bin == "" {
		bin, _ = exec.LookPath(hostile.ServerName)
	}
	if bin == "" {
		return "", fmt.Errorf("the wrap scheme's attacks need the hostile test server: build it and name it in %s (%s)", HostileServerEnv, buildHint)
	}
	return filepath.Abs(bin)
}

// Params: a raw call of one of the hostile server's tools, its arguments expanded, the start
// token added (the server prints it joined first, so the step proves it ran). Other steps, and
// any step when [wrap].command runs another server, are n/a.
func (adapter) Params(st harness.Step, a *harness.Arena, p *policy.Policy) (*mcp.CallToolParams, error) {
	if st.Kind() != "tool" {
		return nil, harness.Inapplicable("the wrap scheme has no tools of its own to run a %s step: its scenarios call the wrapped server's tools", st.Kind())
	}
	if len(wrapsec.Of(p).Command) > 0 && filepath.Base(wrapsec.Of(p).Command[0]) != hostile.ServerName {
		return nil, harness.Inapplicable("calls the hostile test server's tools, and [wrap].command runs %s (%s)", wrapsec.Of(p).Command[0], buildHint)
	}
	args := map[string]any{}
	for k, v := range st.Arguments {
		args[k] = harness.ExpandAny(a, v)
	}
	if !st.Start.IsZero() {
		args["start"] = []string{st.Start.A, st.Start.B}
	}
	return &mcp.CallToolParams{Name: st.Tool, Arguments: args}, nil
}

// Expect: the limits bound the server's whole tree; the per-file cap is the allowlist layers'.
func (adapter) Expect(p *policy.Policy) harness.Expect {
	return harness.Expect{Timeout: p.Limits.Timeout.Duration, Output: int64(p.Limits.MaxOutputBytes),
		Memory: int64(p.Limits.Memory), FileSize: int64(alsec.Of(policy.Default(alsec.Name)).MaxFileSize),
		Grace: harness.Grace, Pids: int64(p.Limits.Pids)}
}

const buildHint = "go build -o DIR/" + hostile.ServerName + " ./internal/harness/hostileserver, then command = [\"DIR/" + hostile.ServerName + "\"]"

// HostileServerEnv names the hostile test server's binary for the negative controls.
const HostileServerEnv = "MCPSANDBOX_HOSTILE_SERVER"

// controlPolicy is the base the controls weaken: wrap's defaults around the hostile test server
// (MCPSANDBOX_HOSTILE_SERVER, or hostileserver on PATH), with a 10s timeout and 1GiB of memory. On its own it
// contains every control's scenario.
func controlPolicy() (*policy.Policy, error) {
	abs, err := hostileServer()
	if err != nil {
		return nil, err
	}
	p := policy.Default(wrapsec.Name)
	p.Name = "harness-controls"
	wrapsec.Of(p).Command = []string{abs}
	p.Limits.Timeout = policy.Duration{Duration: 10 * time.Second}
	// The hostile server is a Go binary: Go's runtime reserves more than 512MiB of address space
	// as it starts, which limits.memory (RLIMIT_AS) must leave room for.
	p.Limits.Memory = 1 << 30
	return p, nil
}

// Launch writes the wrap policy a bench compares with other sandboxes into dir: the scheme's
// defaults, with limits.memory raised to memory when it is not 0 (a Go or Node server reserves
// more address space at start than the default allows), and returns the argv that starts a
// server under it: `BIN wrap --policy P --` (the server's argv follows).
func Launch(bin, dir string, memory policy.Size) ([]string, error) {
	p := policy.Default(wrapsec.Name)
	p.Name = "hostile"
	p.Audit.Path = filepath.Join(dir, "audit.jsonl")
	if memory > 0 {
		p.Limits.Memory = memory
	}
	b, err := policy.Marshal(p)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "wrap-policy.toml")
	if err := os.WriteFile(file, b, 0o644); err != nil {
		return nil, err
	}
	return []string{bin, "wrap", "--policy", file, "--"}, nil
}
