package generate

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Answers are what the wizard asks, or the flags say. Zero values take the scheme's defaults.
type Answers struct {
	Scheme string
	Name   string

	// limits ("" / 0 = default)
	Timeout   string
	MaxOutput string
	Memory    string
	Pids      int

	// allowlist
	Workspace string
	Allow     []string // names on the fixed PATH, or absolute paths
	Network   bool     // every host (allowlist only)

	// allowlist and docker: only these hosts, through serve's egress proxy. Each word is a host
	// pattern ("pypi.org", "api.example.com:443", "*.example.com") or a preset name (pypi, npm,
	// github, see policy.NetworkPresets); BuildPolicy expands and checks them (ExpandHosts).
	Hosts []string

	// docker
	Image                   string
	DockerWorkspace         string
	DockerWorkspaceWritable bool
	Pool                    int
	Runtime                 string // the engine's runtime for the containers ("" = its default)
	DockerNetwork           string // a docker network containers join ("" = none); kept from an existing policy, or "bridge" for every host

	// e2b
	E2BTemplate string
	APIKeyEnv   string
	Reuse       string

	// how clients reach serve: "" = stdio (each client starts serve); else the URL of a
	// running `serve --http`, with the variable the clients read the bearer token from
	HTTPURL  string
	TokenEnv string

	// netAsked is the wizard's network choice (NetChoice*), "" until asked.
	netAsked string

	// Base, when set and of the same scheme, is the policy a re-run starts from: everything the
	// answers do not say (env, protect, deny_args, audit path, …) is kept from it.
	Base *policy.Policy
}

// AnswersFrom reads a policy back into answers, so a re-run of the wizard starts from it.
func AnswersFrom(p *policy.Policy) Answers {
	a := Answers{Scheme: p.Scheme, Name: p.Name, Base: p,
		Timeout: p.Limits.Timeout.String(), MaxOutput: p.Limits.MaxOutputBytes.String(), Memory: p.Limits.Memory.String(), Pids: p.Limits.Pids,
		Workspace: p.Allowlist.Workspace,
		Image:     p.Docker.Image, DockerWorkspace: p.Docker.Workspace, DockerWorkspaceWritable: p.Docker.WorkspaceWritable, Pool: p.Docker.Pool, Runtime: p.Docker.Runtime,
		E2BTemplate: p.E2B.Template, APIKeyEnv: p.E2B.APIKeyEnv, Reuse: p.E2B.Reuse}
	var n policy.Network
	switch p.Scheme {
	case policy.SchemeAllowlist:
		n = p.Allowlist.Net()
		a.Network = n.Mode == policy.NetAll
	case policy.SchemeDocker:
		n = p.Docker.Net()
		if n.Mode == policy.NetNamed {
			a.DockerNetwork = n.Name
		}
	}
	for _, h := range n.Hosts() {
		a.Hosts = append(a.Hosts, h.String())
	}
	for _, c := range p.Allowlist.Commands {
		if pc, err := Pin(c.Name); err == nil && pc.Path == c.Path {
			a.Allow = append(a.Allow, c.Name)
		} else {
			a.Allow = append(a.Allow, c.Path)
		}
	}
	return a
}

// CheckWorkspace refuses workspaces that would hand out far more than a scratch directory.
func CheckWorkspace(ws, home string) error {
	if ws == "" {
		return errors.New("the workspace is required: a directory for the AI's files, such as ~/ai-workspace")
	}
	if !filepath.IsAbs(ws) {
		return fmt.Errorf("workspace %q is not absolute: give a full path", ws)
	}
	ws = filepath.Clean(ws)
	switch {
	case ws == "/":
		return errors.New("the workspace cannot be /: commands could write everywhere you can; use a dedicated directory such as ~/ai-workspace")
	case home != "" && ws == filepath.Clean(home):
		return fmt.Errorf("the workspace cannot be your home directory (%s): your keys, shell rc files and configs would be writable; use a subdirectory such as %s", ws, filepath.Join(home, "ai-workspace"))
	case home != "" && strings.HasPrefix(filepath.Clean(home)+"/", ws+"/"):
		return fmt.Errorf("the workspace %s contains your home directory: use a dedicated subdirectory", ws)
	}
	return nil
}

// ExpandHome turns a leading ~/ into the home directory.
func ExpandHome(p, home string) string {
	if p == "~" {
		return home
	}
	if strings.HasPrefix(p, "~/") {
		return filepath.Join(home, p[2:])
	}
	return p
}

// BuildPolicy turns answers into a validated policy: commands resolved to absolute paths and
// sha256-pinned now, default deny_args attached.
func BuildPolicy(a Answers) (*policy.Policy, error) {
	if a.Scheme == "" {
		return nil, errors.New("choose a scheme: allowlist, docker or e2b")
	}
	p := policy.Default(a.Scheme)
	var base map[string]policy.Command
	if a.Base != nil && a.Base.Scheme == a.Scheme {
		p = a.Base
		base = map[string]policy.Command{}
		for _, c := range p.Allowlist.Commands {
			base[c.Name] = c
		}
		p.Allowlist.Commands = nil
		p.Docker.Workspace, p.Docker.WorkspaceWritable = "", false
	}
	if a.Name != "" {
		p.Name = a.Name
	}
	if err := a.applyLimits(p); err != nil {
		return nil, err
	}
	net, err := a.network()
	if err != nil {
		return nil, err
	}
	switch a.Scheme {
	case policy.SchemeAllowlist:
		err = a.applyAllowlist(p, net, base)
	case policy.SchemeDocker:
		err = a.applyDocker(p, net)
	case policy.SchemeE2B:
		a.applyE2B(p)
	}
	if err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return p, nil
}

// applyLimits sets the limits the answers give.
func (a *Answers) applyLimits(p *policy.Policy) error {
	if a.Timeout != "" {
		d, err := time.ParseDuration(a.Timeout)
		if err != nil {
			return fmt.Errorf("timeout %q: %w (use e.g. 30s or 2m)", a.Timeout, err)
		}
		p.Limits.Timeout = policy.Duration{Duration: d}
	}
	for _, s := range []struct {
		v   string
		dst *policy.Size
		key string
	}{{a.MaxOutput, &p.Limits.MaxOutputBytes, "max output"}, {a.Memory, &p.Limits.Memory, "memory"}} {
		if s.v == "" {
			continue
		}
		z, err := policy.ParseSize(s.v)
		if err != nil {
			return fmt.Errorf("%s %q: %w (use e.g. 64KiB or 256MiB)", s.key, s.v, err)
		}
		*s.dst = z
	}
	if a.Pids != 0 {
		p.Limits.Pids = a.Pids
	}
	return nil
}

// applyAllowlist sets the workspace, the network and the commands, each pinned by sha256; a
// command base already held at the same path keeps its deny_args and options.
func (a *Answers) applyAllowlist(p *policy.Policy, net policy.Network, base map[string]policy.Command) error {
	home, _ := os.UserHomeDir()
	ws := ExpandHome(a.Workspace, home)
	if err := CheckWorkspace(ws, home); err != nil {
		return err
	}
	p.Allowlist.Workspace = filepath.Clean(ws)
	p.Allowlist.SetNet(net)
	if len(a.Allow) == 0 {
		return fmt.Errorf("allow at least one command (e.g. --allow %s)", strings.Join(DefaultCommands[:4], ","))
	}
	seen := map[string]bool{}
	for _, n := range a.Allow {
		n = strings.TrimSpace(n)
		if n == "" || seen[n] {
			continue
		}
		seen[n] = true
		c, err := Pin(n)
		if err != nil {
			return fmt.Errorf("allow %s: %w", n, err)
		}
		if b, ok := base[c.Name]; ok && b.Path == c.Path { // keep its deny_args and options; the pin is renewed
			c.DenyArgs, c.AllowOutsidePaths = b.DenyArgs, b.AllowOutsidePaths
		}
		p.Allowlist.Commands = append(p.Allowlist.Commands, c)
	}
	return nil
}

// applyDocker sets the image, the workspace mount, the pool, the runtime and the network.
func (a *Answers) applyDocker(p *policy.Policy, net policy.Network) error {
	if a.Image != "" {
		p.Docker.Image = a.Image
	}
	if a.DockerWorkspace != "" {
		home, _ := os.UserHomeDir()
		ws := ExpandHome(a.DockerWorkspace, home)
		if err := CheckWorkspace(ws, home); err != nil {
			return err
		}
		p.Docker.Workspace = filepath.Clean(ws)
		p.Docker.WorkspaceWritable = a.DockerWorkspaceWritable
	}
	p.Docker.Pool = a.Pool
	p.Docker.Runtime = a.Runtime
	p.Docker.SetNet(net)
	return nil
}

// applyE2B sets the template, the API key's variable and the reuse mode.
func (a *Answers) applyE2B(p *policy.Policy) {
	if a.E2BTemplate != "" {
		p.E2B.Template = a.E2BTemplate
	}
	if a.APIKeyEnv != "" {
		p.E2B.APIKeyEnv = a.APIKeyEnv
	}
	if a.Reuse != "" {
		p.E2B.Reuse = a.Reuse
	}
}

// Interpreters lists the allowed names that run arbitrary code.
func Interpreters(p *policy.Policy) []string {
	var out []string
	for _, c := range p.Allowlist.Commands {
		if policy.IsInterpreter(c.Name) || policy.IsInterpreter(filepath.Base(c.Path)) {
			out = append(out, c.Name)
		}
	}
	return out
}

// CommonTools are offered in the wizard's command list when found on the fixed PATH.
var CommonTools = append(append([]string{}, DefaultCommands...), "file", "find", "jq", "rg", "stat", "du", "nl", "tac", "comm", "join", "paste", "fold", "md5sum", "sha256sum", "base64", "python3", "node")

// Available filters names to those present on the fixed PATH.
func Available(names []string) []string {
	var out []string
	for _, n := range names {
		if _, err := Pin(n); err == nil {
			out = append(out, n)
		}
	}
	return out
}
