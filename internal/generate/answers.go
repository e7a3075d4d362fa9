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
// Each scheme's own answers are its own (Own): its Wizard makes them.
type Answers struct {
	Scheme string
	Name   string

	// Made are the directories the questions created (a docker workspace the wizard offered to
	// make): init removes each again, if still empty, when it ends without writing (trial46 F4).
	Made []string

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
	// started is the policy the re-run started from, kept while the wizard visits another
	// scheme (Base is nil there) so that coming back to its scheme starts from it again.
	started *policy.Policy

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
	// serve's own rule, judged here before anything is written or advised (trial30 F10, F13):
	// a system directory, a home's dot directory, as the path resolves so far
	resolved := policy.ResolveExisting(ws)
	if st, err := os.Stat(resolved); err == nil && !st.IsDir() {
		return fmt.Errorf("the workspace %s is not a directory: give a directory (it is created if missing)", ws)
	}
	h := policy.HostHomes()
	if home != "" {
		h.Homes = append(h.Homes, home)
	}
	return policy.CheckWorkspacePathWith(ws, resolved, policy.WorkspaceUse{Harm: "programs could change what the host runs"}, h)
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

// applyLimits sets the limits the answers give; a problem is the policy's, by its key (init
// names the flag that gave it).
func (a *Answers) applyLimits(p *policy.Policy) error {
	for _, q := range []struct{ flag, v string }{{"timeout", a.Timeout}, {"max-output", a.MaxOutput}, {"memory", a.Memory}} {
		if q.v == "" {
			continue
		}
		if pb := setLimit(&p.Limits, q.flag, q.v); pb != nil {
			return &policy.Error{Problems: []policy.Problem{*pb}}
		}
	}
	if a.Pids != 0 {
		p.Limits.Pids = a.Pids
	}
	return nil
}

// limitFlags are init's limit flags: the flag, what the answer is called, the policy key that
// judges it. One table for both ways: an answer judged by its key (SetLimit), a key's problem
// named by its flag (FlagOfKey).
var limitFlags = map[string]struct{ name, key string }{
	"timeout":    {"timeout", "limits.timeout"},
	"max-output": {"output cap", "limits.max_output_bytes"},
	"memory":     {"memory", "limits.memory"},
	"pids":       {"processes", "limits.pids"},
}

// FlagOfKey is the init flag that sets the policy key, if one does: a problem with that key
// then names the flag the user typed, not only the key of a file they have not seen yet.
func FlagOfKey(key string) (string, bool) {
	for f, l := range limitFlags {
		if l.key == key {
			return f, true
		}
	}
	return "", false
}

// SetLimit parses the answer v to the limit flag into l and judges it by the policy's own rule
// (policy.Limits.CheckLimit), so the wizard can refuse it at its question (trial30 F1).
func SetLimit(l *policy.Limits, flag, v string) error {
	pb := setLimit(l, flag, v)
	switch {
	case pb == nil:
		return nil
	case pb.Fix == "": // not a value of its kind: the message names it
		return fmt.Errorf("%s %s", limitFlags[flag].name, pb.Msg)
	}
	return fmt.Errorf("%s %s: %s (%s)", limitFlags[flag].name, strings.TrimSpace(v), pb.Msg, pb.Fix)
}

func setLimit(l *policy.Limits, flag, v string) *policy.Problem {
	key := limitFlags[flag].key
	switch flag {
	case "timeout":
		d, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			return &policy.Problem{Key: key, Msg: fmt.Sprintf("%q is not a duration: write it like \"30s\" or \"2m\"", v)}
		}
		l.Timeout = policy.Duration{Duration: d}
	case "max-output", "memory":
		z, err := policy.ParseSize(v)
		if err != nil {
			return &policy.Problem{Key: key, Msg: err.Error()}
		}
		if flag == "memory" {
			l.Memory = z
		} else {
			l.MaxOutputBytes = z
		}
	default:
		return &policy.Problem{Msg: flag + " is not a limit init asks"}
	}
	return l.CheckLimit(key)
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
