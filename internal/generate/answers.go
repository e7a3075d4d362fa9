package generate

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Answers are what the wizard asks, or the flags say. Zero values take the scheme's defaults.
// Each scheme's own answers are its own (Own): its Wizard makes them.
type Answers struct {
	Scheme string
	Name   string

	// limits ("" / 0 = default)
	Timeout   string
	MaxOutput string
	Memory    string
	Pids      int

	// Network is every host, for a scheme whose network takes it (--network).
	Network bool
	// Hosts: only these hosts, through serve's egress proxy. Each word is a host pattern
	// ("pypi.org", "api.example.com:443", "*.example.com") or a preset name (pypi, npm, github,
	// see policy.NetworkPresets); BuildPolicy expands and checks them (ExpandHosts).
	Hosts []string

	// how clients reach serve: "" = stdio (each client starts serve); else the URL of a
	// running `serve --http`, with the variable the clients read the bearer token from
	HTTPURL  string
	TokenEnv string

	// netAsked is the wizard's network choice (NetChoice*), "" until asked.
	netAsked string

	// Base, when set and of the same scheme, is the policy a re-run starts from: everything the
	// answers do not say (env, protect, deny_args, audit path, …) is kept from it.
	Base *policy.Policy

	// Wizards are the schemes init offers, by name (the registry's scheme.Scheme.Wizard).
	Wizards map[string]*Wizard
	schemes map[string]SchemeAnswers // each scheme's own answers (OwnOf)
}

// AnswersFrom reads a policy back into answers, so a re-run of the wizard starts from it; the
// scheme's own answers come from its wizard (wizards).
func AnswersFrom(p *policy.Policy, wizards map[string]*Wizard) Answers {
	a := Answers{Scheme: p.Scheme, Name: p.Name, Base: p, Wizards: wizards,
		Timeout: p.Limits.Timeout.String(), MaxOutput: p.Limits.MaxOutputBytes.String(), Memory: p.Limits.Memory.String(), Pids: p.Limits.Pids}
	if sec := p.Section(); sec != nil {
		if n, ok := sec.Network(); ok {
			for _, h := range n.Hosts() {
				a.Hosts = append(a.Hosts, h.String())
			}
		}
	}
	if own := a.Own(); own != nil {
		own.From(&a, p)
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

// WorkspacePath is a workspace as given to init made absolute: a leading ~/ is the home
// directory, and a relative path is taken from the current directory, as --policy-out is (the
// policy needs an absolute one: serve runs wherever its client starts it). "" stays "".
func WorkspacePath(p, home string) string {
	p = ExpandHome(p, home)
	if p == "" || filepath.IsAbs(p) || mutated("init-workspace-relative") {
		return p
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
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

// BuildPolicy turns answers into a validated policy: the common answers here, the scheme's
// own by its answers' Apply (commands resolved and pinned, workspaces checked, …).
func BuildPolicy(a Answers) (*policy.Policy, error) {
	if a.Scheme == "" {
		return nil, errors.New("choose a scheme: allowlist, docker or e2b")
	}
	p := policy.Default(a.Scheme)
	fromBase := a.Base != nil && a.Base.Scheme == a.Scheme
	if fromBase {
		p = a.Base
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
	if own := a.Own(); own != nil {
		if err := own.Apply(&a, p, net, fromBase); err != nil {
			return nil, err
		}
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
