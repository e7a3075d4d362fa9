package docker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// wizard is the docker scheme's part of init.
var wizard = &generate.Wizard{
	Blurb: "a fresh locked-down container per call. Isolation: strong (shared kernel). Flexibility: any code. Setup: Docker. Cost: free, about 0.1 s a call (a few ms with docker.pool; gVisor about 0.4 s)",
	Needs: "a running Docker engine on this machine, and the image present in it (init offers to pull it)",
	New:   func() generate.SchemeAnswers { return &Answers{} },
}

// Answers are the docker scheme's own answers in init.
type Answers struct {
	Image             string
	Workspace         string // host directory mounted at /workspace ("" = none)
	WorkspaceWritable bool
	Pool              int
	Runtime           string // the engine's runtime for the containers ("" = its default)
	NetworkName       string // a docker network containers join ("" = none); kept from an existing policy, or "bridge" for every host
	Reuse             string // "call" (a fresh container per call, the default) or "session" (one per MCP session)
	writableFlag      bool   // --docker-workspace-writable was given: the wizard does not trade it for sessions
}

// Own is the docker scheme's answers among a's (a fresh, unkept one when a offers no docker).
func Own(a *generate.Answers) *Answers {
	if d, ok := a.OwnOf(dksec.Name).(*Answers); ok {
		return d
	}
	return &Answers{}
}

// Flags binds --image, --docker-workspace, --docker-workspace-writable, --pool, --runtime and
// --docker-reuse (--reuse is e2b's).
func (d *Answers) Flags(fl *pflag.FlagSet) {
	fl.StringVar(&d.Image, "image", "", "docker: image (default python:3.12-slim); the engine must be running and hold it (init checks; the wizard offers to pull)")
	fl.StringVar(&d.Workspace, "docker-workspace", "", "docker: host directory to mount at /workspace")
	fl.BoolVar(&d.WorkspaceWritable, "docker-workspace-writable", false, "docker: mount the workspace writable")
	fl.IntVar(&d.Pool, "pool", 0, "docker: containers to keep pre-started (each used for one call)")
	fl.StringVar(&d.Reuse, "docker-reuse", "", `docker: "call" (a fresh container per call, the default) or "session" (one container per MCP session: variables and files persist, file tools)`)
	fl.StringVar(&d.Runtime, "runtime", "", `docker: the engine's container runtime: "" = its default (runc), "crun" (starts faster), "runsc" (gVisor: a kernel of its own); the engine must have it registered (init checks)`)
	generate.SetFlagRole(fl, "image", "image", "IMAGE")
	generate.SetFlagRole(fl, "docker-workspace", "workspace", "DIR")
	generate.SetFlagRole(fl, "docker-reuse", "reuse", "call|session")
}

// Missing: every docker answer has a default.
func (d *Answers) Missing() []string { return nil }

// From reads the image, the workspace mount, the pool, the runtime, the reuse mode and a named
// network back.
func (d *Answers) From(_ *generate.Answers, p *policy.Policy) {
	s := *dksec.Of(p)
	d.Image, d.Workspace, d.WorkspaceWritable, d.Pool, d.Runtime, d.Reuse = s.Image, s.Workspace, s.WorkspaceWritable, s.Pool, s.Runtime, s.Reuse
	if n := s.Net(); n.Mode == policy.NetNamed {
		d.NetworkName = n.Name
	}
}

// Prefill: the image, the workspace and the runtime from ds; from a base also its named
// network, its pool and whether the workspace is writable.
func (d *Answers) Prefill(ds generate.SchemeAnswers, given func(string) bool, base bool) {
	from := ds.(*Answers)
	d.writableFlag = given("docker-workspace-writable")
	generate.PrefillString(given, "image", &d.Image, from.Image)
	generate.PrefillString(given, "docker-workspace", &d.Workspace, from.Workspace)
	generate.PrefillString(given, "runtime", &d.Runtime, from.Runtime)
	generate.PrefillString(given, "docker-reuse", &d.Reuse, from.Reuse)
	if !base {
		return
	}
	if d.NetworkName == "" {
		d.NetworkName = from.NetworkName
	}
	if !given("pool") {
		d.Pool = from.Pool
	}
	if !given("docker-workspace-writable") {
		d.WorkspaceWritable = from.WorkspaceWritable
	}
}

// Apply sets the image, the workspace mount, the pool, the runtime, the reuse mode and the
// network.
func (d *Answers) Apply(_ *generate.Answers, p *policy.Policy, net policy.Network, fromBase bool) error {
	if fromBase {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = "", false
	}
	if d.Image != "" {
		dksec.Of(p).Image = d.Image
	}
	if d.Workspace != "" {
		home, _ := os.UserHomeDir()
		ws := generate.WorkspacePath(d.Workspace, home)
		if err := generate.CheckWorkspace(ws, home); err != nil {
			return err
		}
		dksec.Of(p).Workspace = filepath.Clean(ws)
		dksec.Of(p).WorkspaceWritable = d.WorkspaceWritable
	} else if d.WorkspaceWritable {
		// without a workspace there is nothing to mount, writable or not: said, not dropped
		return errors.New("--docker-workspace-writable makes the workspace mount writable, and there is none: give --docker-workspace DIR too, or drop --docker-workspace-writable")
	}
	dksec.Of(p).Pool = d.Pool
	dksec.Of(p).Runtime = d.Runtime
	switch d.Reuse {
	case "", "call":
		dksec.Of(p).Reuse = "" // "call", the default, left out of the file
	case "session":
		if dksec.Of(p).WorkspaceWritable {
			return errors.New(`--docker-reuse session cannot be used with a writable workspace (a session's container outlives its calls): drop --docker-workspace-writable, or use --docker-reuse call`)
		}
		dksec.Of(p).Reuse = d.Reuse
		// written out, so the file names the keys a session's refusal or note names (trial34 F4)
		if dksec.Of(p).SessionIdle.Duration == 0 {
			dksec.Of(p).SessionIdle = policy.Duration{Duration: dksec.Of(p).Idle()}
		}
		if dksec.Of(p).MaxSessions == 0 {
			dksec.Of(p).MaxSessions = dksec.Of(p).SessionCap()
		}
	default:
		return fmt.Errorf(`--docker-reuse %q: use "call" (a fresh container per call) or "session" (one container per MCP session)`, d.Reuse)
	}
	dksec.Of(p).SetNet(net)
	return nil
}

// Network: a host list, a docker network, or none; --network (every host) is not docker's.
func (d *Answers) Network(a *generate.Answers, hosts []string) (policy.Network, error) {
	switch {
	case a.Network:
		return policy.Network{}, errors.New(`network: every host (--network) is for the allowlist scheme: for docker list the hosts calls need (--network-hosts pypi,api.example.com)`)
	case len(hosts) > 0 && d.NetworkName != "":
		return policy.Network{}, fmt.Errorf("network: the docker network %q and a host list conflict: give one of them", d.NetworkName)
	case len(hosts) > 0:
		return policy.NetworkHosts(hosts...)
	case d.NetworkName != "" && d.NetworkName != "none":
		return policy.Network{Mode: policy.NetNamed, Name: d.NetworkName}, nil
	}
	return policy.Network{Mode: policy.NetNone, Name: "none"}, nil
}

// AllHosts: the containers join a docker network.
func (d *Answers) AllHosts(*generate.Answers) bool { return d.NetworkName != "" }

// SetAllHosts: every host joins "bridge" unless the policy names a network; less joins none.
func (d *Answers) SetAllHosts(_ *generate.Answers, all bool) {
	switch {
	case !all:
		d.NetworkName = ""
	case d.NetworkName == "":
		d.NetworkName = "bridge"
	}
}

// WritableWorkspaceQuestion says what a writable docker workspace means before it is chosen.
const WritableWorkspaceQuestion = "Mount it writable? Each call's writes are checked before they reach this machine: " +
	"names that run code or steer agents (git hooks, CLAUDE.md, .npmrc, CI workflows: the protect list) are refused, " +
	"the rest land as the call ends, up to limits.workspace_quota. What lands is still the code's content for you to " +
	"review, and verify notes the mount (MS204). Say no unless code must write results there, and then mount a directory of its own:"

// SessionsReadOnlyQuestion asks the reuse mode after a "yes" to a writable workspace: why a
// session cannot have one, and that picking it mounts the workspace read-only.
const SessionsReadOnlyQuestion = "Container reuse? A session (Python variables and files kept across calls) needs a read-only workspace: " +
	"its container outlives its calls, so no call's writes could be checked and applied. " +
	"call keeps the workspace writable; session mounts it read-only (/tmp is then the only writable place):"

// Questions: the image, the workspace mount and whether it is writable, the network, the
// pool, the reuse mode (not with a writable workspace) and the runtime.
func (d *Answers) Questions() []generate.Question { return questions }

var questions = append([]generate.Question{
	{Flag: "image", Kind: generate.Input, Message: generate.Msg("Image (it must be present in the engine; init offers to pull it):"),
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).Image }, Set: func(a *generate.Answers, v any) { Own(a).Image = strings.TrimSpace(v.(string)) },
		Validate: func(_ *generate.Answers, v string, _ generate.Env) error {
			if strings.TrimSpace(v) == "" {
				return fmt.Errorf("name an image, e.g. %s", dksec.Of(policy.Default(dksec.Name)).Image)
			}
			return nil
		}},
	{Flag: "docker-workspace", Kind: generate.Input, Message: generate.Msg("Host directory to mount at /workspace (empty for none):"),
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).Workspace },
		Validate: func(_ *generate.Answers, v string, e generate.Env) error {
			if v == "" {
				return nil
			}
			return generate.CheckWorkspace(generate.WorkspacePath(v, e.Home), e.Home)
		}, Set: func(a *generate.Answers, v any) {
			if Own(a).Workspace = v.(string); v == "" {
				Own(a).WorkspaceWritable = false // none to mount: a writable one kept from a re-run goes with it
			}
		}},
	{Flag: "docker-workspace-writable", Kind: generate.Confirm, Message: generate.Msg(WritableWorkspaceQuestion),
		When:    func(a *generate.Answers) bool { return Own(a).Workspace != "" },
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).WorkspaceWritable }, Set: func(a *generate.Answers, v any) { Own(a).WorkspaceWritable = v.(bool) }},
}, append(generate.NetQuestions("containers", `joins a docker network ("bridge" unless the policy names one): the host's network and the internet (verify flags it, MS201)`),
	generate.IntQuestion("pool", "Containers to keep pre-started (0-8; each serves one call):", 0, 64, func(a *generate.Answers) *int { return &Own(a).Pool }),
	generate.Question{Flag: "docker-reuse", Kind: generate.Select,
		Message: func(a *generate.Answers) string {
			if Own(a).WorkspaceWritable {
				return SessionsReadOnlyQuestion
			}
			return "Container reuse:"
		},
		Options: func(*generate.Answers) []string { return []string{"call", "session"} },
		// Asked with a writable workspace too, saying what sessions need: left out there, a
		// "yes" to writable silently took sessions away, the reason a data person picks docker
		// (trial40 F2). Not when --docker-workspace-writable was given: the flag chose.
		When: func(a *generate.Answers) bool {
			return !Own(a).WorkspaceWritable || !Own(a).writableFlag && !mutated("init-wizard-docker-sessions-silent")
		},
		Describe: func(v string) string {
			if v == "session" {
				return "one container per MCP session: Python variables and files persist across its calls, and write_file/read_file/list_files work in it"
			}
			return "a fresh container for every call: nothing carries over (the default)"
		},
		Default: func(a *generate.Answers, _ generate.Env) any {
			if r := Own(a).Reuse; r != "" && !Own(a).WorkspaceWritable { // writable: just answered, Enter keeps it
				return r
			}
			return "call"
		}, Set: func(a *generate.Answers, v any) {
			if Own(a).Reuse = v.(string); Own(a).Reuse == "session" {
				Own(a).WorkspaceWritable = false // as the question said: a session needs it read-only
			}
		}},
	generate.Question{Flag: "runtime", Kind: generate.Input,
		Message: generate.Msg(`Container runtime (empty: the engine's default, runc; "crun": the same isolation, starts faster; "runsc": gVisor, a kernel of its own, starts slower; init checks the engine has it):`),
		Default: func(a *generate.Answers, _ generate.Env) any { return Own(a).Runtime }, Set: func(a *generate.Answers, v any) { Own(a).Runtime = strings.TrimSpace(v.(string)) },
		Validate: func(_ *generate.Answers, v string, _ generate.Env) error {
			return dksec.CheckRuntimeName(strings.TrimSpace(v))
		}})...)
