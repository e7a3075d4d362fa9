package allowlist

import (
	_ "embed"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// adapter speaks run_allowed_command.
type adapter struct{}

// scenariosTOML is how the scheme's tools express the scenarios their neutral steps cannot say
// (its own steps, detectors or skip, by scenario id), checked by harness.Offer.
//
//go:embed scenarios.toml
var scenariosTOML []byte

// offer is what the scheme offers the scenarios' needs: its commands are the host's own pinned binaries under serve's argument check, in a sandbox on this host, with serve's file tools and egress proxy here; but they run in serve's cgroup (none of their own) and keep no sandbox per session.
var offer = harness.NewOffer(alsec.Name, []string{harness.NeedCommands, harness.NeedHostEgress, harness.NeedHostWorkspace, harness.NeedHostBinaries, harness.NeedLocalSandbox}, "internal/schemes/allowlist/scenarios.toml", scenariosTOML)

// Offer: which scenarios apply to the scheme, and its own steps for some.
func (adapter) Offer() *harness.Offer { return offer }

func (adapter) Prepare(p *policy.Policy, a *harness.Arena) error {
	alsec.Of(p).Workspace = a.WS
	p.Audit.Path = a.AuditPath()
	if os.Geteuid() != 0 {
		return nil
	}
	// Root serves commands as policy user, else the workspace owner: hand the workspace to
	// nobody unless the policy names a user, as `init` would for a root-owned setup.
	uid, gid := 65534, 65534
	if u, g, ok := strings.Cut(alsec.Of(p).User, ":"); ok {
		uid, _ = strconv.Atoi(u)
		gid, _ = strconv.Atoi(g)
	}
	if err := a.ChownWorkspace(uid, gid); err != nil {
		return fmt.Errorf("hand the harness workspace to uid %d: %w", uid, err)
	}
	return nil
}

// interpreters are the allowlisted names a python or shell step can run through.
var interpreters = map[string][]string{
	"python": {"python3", "python"},
	"shell":  {"sh", "bash", "dash"},
}

// sameInterpreter is the allowlisted name of the interpreter an argv step names under another
// (the step's python3, a venv's python): such a step attacks what any of them runs. "" if none
// is allowlisted (trial37 F9: planted-script-interpreter was N/A, "needs "python3"", for a
// policy allowlisting python).
func sameInterpreter(p *policy.Policy, name string) string {
	if mutated("harness-argv-interpreter-exact") {
		return ""
	}
	for _, family := range interpreters {
		if !slices.Contains(family, name) {
			continue
		}
		for _, n := range family {
			if _, ok := alsec.Of(p).Command(n); ok {
				return n
			}
		}
	}
	return ""
}

func (adapter) Params(st harness.Step, a *harness.Arena, p *policy.Policy) (*mcp.CallToolParams, error) {
	call := func(command string, args []string) *mcp.CallToolParams {
		for i := range args {
			args[i] = a.Expand(args[i])
		}
		return &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": command, "args": args}}
	}
	switch st.Kind() {
	case "argv":
		name := st.Argv[0]
		if _, ok := alsec.Of(p).Command(name); !ok {
			alt := sameInterpreter(p, name)
			if alt == "" {
				return nil, harness.Inapplicable("needs %q allowlisted", name)
			}
			name = alt
		}
		return call(name, append([]string(nil), st.Argv[1:]...)), nil
	case "python", "shell":
		// Python and shell steps prove they started with the harness's start token, printed by
		// a prelude before the step's first statement (see harness.StartToken). An argv step is
		// the pinned program itself, with no room for a prelude: the harness proves it by the
		// exit status that came back, its output, or its process seen from the host.
		kind, code := "python", st.PythonStart()+st.Python
		if st.Shell != "" {
			kind, code = "shell", st.ShellStart()+st.Shell
		}
		for _, name := range interpreters[kind] {
			if _, ok := alsec.Of(p).Command(name); ok {
				// The tag rides in argv (sys.argv[1], $0) so the survivor scan finds the tree.
				return call(name, []string{"-c", code, a.Tag}), nil
			}
		}
		return nil, harness.Inapplicable("needs a %s interpreter allowlisted (%s)", kind, strings.Join(interpreters[kind], ", "))
	case "tool":
		args := map[string]any{}
		for k, v := range st.Arguments {
			args[k] = harness.ExpandAny(a, v)
		}
		if c, _ := args["command"].(string); c != "" {
			if _, ok := alsec.Of(p).Command(c); !ok {
				return nil, harness.Inapplicable("needs %q allowlisted", c)
			}
		}
		return &mcp.CallToolParams{Name: st.Tool, Arguments: args}, nil
	}
	return nil, fmt.Errorf("empty step")
}

func (adapter) Expect(p *policy.Policy) harness.Expect {
	return harness.Expect{Timeout: p.Limits.Timeout.Duration, Output: int64(p.Limits.MaxOutputBytes),
		Memory: int64(p.Limits.Memory), FileSize: int64(alsec.Of(p).MaxFileSize), Grace: harness.Grace,
		Pids: int64(p.Limits.Pids), Protect: alsec.Of(p).Protect}
}
