package docker

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// adapter speaks run_python_sandbox and run_shell_sandbox. Host paths under the mounted
// workspace become their /workspace paths; every other host path (canaries, fake HOME) is
// handed over as is and does not exist in the container, as it should not. Programs run as
// children carrying the run's tag in argv, so the harness's process detectors (survivors,
// memory) see them from the host as they see allowlist commands.
type adapter struct{}

// scenariosTOML is how the scheme's tools express the scenarios their neutral steps cannot say
// (its own steps, detectors or skip, by scenario id), checked by harness.Offer.
//
//go:embed scenarios.toml
var scenariosTOML []byte

// offer is what the scheme offers the scenarios' needs: its commands are an image's, in a container on this host (a cgroup of its own per call, a container per session when the policy says so), with serve's file tools and egress proxy here.
var offer = harness.NewOffer(dksec.Name, []string{harness.NeedCommands, harness.NeedHostEgress, harness.NeedHostWorkspace, harness.NeedLocalSandbox, harness.NeedCallCgroup, harness.NeedSessions}, "internal/schemes/docker/scenarios.toml", scenariosTOML)

// Offer: which scenarios apply to the scheme, and its own steps for some.
func (adapter) Offer() *harness.Offer { return offer }

func (adapter) Prepare(p *policy.Policy, a *harness.Arena) error {
	dksec.Of(p).Workspace = a.WS
	p.Audit.Path = a.AuditPath()
	if os.Geteuid() != 0 {
		return nil
	}
	// Containers run as docker.user: hand the workspace to it, as a user setting one up would.
	uid, gid := 65534, 65534
	if u, g, ok := strings.Cut(dksec.Of(p).User, ":"); ok {
		uid, _ = strconv.Atoi(u)
		gid, _ = strconv.Atoi(g)
	}
	if err := a.ChownWorkspace(uid, gid); err != nil {
		return fmt.Errorf("hand the harness workspace to uid %d: %w", uid, err)
	}
	return nil
}

// inContainer maps host paths under the mounted workspace to the container's view.
func inContainer(s string, p *policy.Policy) string {
	if ws := dksec.Of(p).Workspace; ws != "" {
		s = strings.ReplaceAll(s, strings.TrimSuffix(ws, "/"), "/workspace")
	}
	return s
}

func shq(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func pyq(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid Python string literal
	return string(b)
}

func (adapter) Params(st harness.Step, a *harness.Arena, p *policy.Policy) (*mcp.CallToolParams, error) {
	exp := func(s string) string { return inContainer(a.Expand(s), p) }
	switch st.Kind() {
	// Every step proves it started with the harness's start token (harness.StartToken): the
	// python and shell steps' own interpreter prints it before their first statement, and an
	// argv step's shell prints it just before it execs the program. A container the engine
	// could not start in time prints nothing, and the harness judges that step ERROR.
	case "python":
		code := fmt.Sprintf("import subprocess, sys\nr = subprocess.call([sys.executable, '-c', %s, %s])\nsys.exit(128 - r if r < 0 else r)\n",
			pyq(st.PythonStart()+exp(st.Python)), pyq(a.Tag))
		return &mcp.CallToolParams{Name: sd.ToolPython, Arguments: map[string]any{"code": code}}, nil
	case "shell":
		return &mcp.CallToolParams{Name: sd.ToolShell, Arguments: map[string]any{"script": "exec /bin/sh -c " + shq(st.ShellStart()+exp(st.Shell)) + " " + shq(a.Tag)}}, nil
	case "argv":
		q := []string{"/bin/sh", "-c", shq(`"$@"`), shq(a.Tag)}
		for _, s := range st.Argv {
			q = append(q, shq(exp(s)))
		}
		return &mcp.CallToolParams{Name: sd.ToolShell, Arguments: map[string]any{"script": st.ShellStart() + "exec " + strings.Join(q, " ")}}, nil
	case "tool":
		args := map[string]any{}
		for k, v := range st.Arguments {
			args[k] = mapStrings(harness.ExpandAny(a, v), p)
		}
		return &mcp.CallToolParams{Name: st.Tool, Arguments: args}, nil
	}
	return nil, fmt.Errorf("empty step")
}

func mapStrings(v any, p *policy.Policy) any {
	switch x := v.(type) {
	case string:
		return inContainer(x, p)
	case []any:
		for i := range x {
			x[i] = mapStrings(x[i], p)
		}
	case map[string]any:
		for k := range x {
			x[k] = mapStrings(x[k], p)
		}
	}
	return v
}

func (adapter) Expect(p *policy.Policy) harness.Expect {
	return harness.Expect{Timeout: p.Limits.Timeout.Duration, Output: int64(p.Limits.MaxOutputBytes),
		Memory: int64(p.Limits.Memory), FileSize: sd.FileSizeLimit, Grace: harness.Grace, OwnKernel: sd.OwnKernel(dksec.Of(p).Runtime)}
}
