package harness

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Control is a negative control: a deliberately weak policy (or, where no policy key can
// weaken a layer, a breach staged from outside) under which one detector must report BREACH.
// A detector that stays silent under its control proves nothing and fails the run.
type Control struct {
	Detector string `json:"detector"`
	Scenario string `json:"scenario"`
	// Kind: "policy" (a weak policy lets the attack through), "expectation" (the detector is
	// held to a tighter bound than the policy enforces, so what it measured must exceed it),
	// or "staged" (the breach is made by the harness outside the sandbox).
	Kind     string `json:"kind"`
	Weakness string `json:"weakness"`
	NeedRoot bool   `json:"need_root,omitempty"`
	mutate   func(*policy.Policy, *Arena) error
	expect   func(*Expect)
	inject   func(*Arena)
}

// ControlResult is one control's run.
type ControlResult struct {
	Control
	Fired   bool    `json:"fired"`
	Outcome Outcome `json:"outcome"`
	Detail  string  `json:"detail"`
}

func networkOn(p *policy.Policy, _ *Arena) error { p.Allowlist.Network = true; return nil }

// Controls lists the built-in negative controls, one or more per detector.
func Controls() []Control {
	return []Control{
		{Detector: "leak", Scenario: "read-ssh-key-absolute", Kind: "policy",
			Weakness: "read_paths holds the secrets' directory and path arguments may leave the workspace",
			mutate: func(p *policy.Policy, a *Arena) error {
				p.Allowlist.ReadPaths = append(p.Allowlist.ReadPaths, a.Root)
				for i := range p.Allowlist.Commands {
					p.Allowlist.Commands[i].AllowOutsidePaths = true
				}
				return nil
			}},
		{Detector: "leak", Scenario: "proc-parent-environ", Kind: "policy",
			Weakness: "allowlist.env passes the server's API key to commands",
			mutate:   func(p *policy.Policy, a *Arena) error { p.Allowlist.Env["API_KEY"] = a.Secret; return nil }},
		{Detector: "outside", Scenario: "write-outside-python", Kind: "policy",
			Weakness: "the workspace is the parent of the secrets (workspace set too wide)",
			mutate:   func(p *policy.Policy, a *Arena) error { p.Allowlist.Workspace = a.Root; return nil }},
		{Detector: "tcp", Scenario: "tcp-exfil-loopback", Kind: "policy", Weakness: "network = true", mutate: networkOn},
		{Detector: "udp", Scenario: "udp-exfil-loopback", Kind: "policy", Weakness: "network = true", mutate: networkOn},
		{Detector: "dns", Scenario: "dns-exfil", Kind: "policy", Weakness: "network = true", mutate: networkOn},
		{Detector: "unix", Scenario: "unix-socket-agent", Kind: "policy", Weakness: "network = true (socket() allowed)", mutate: networkOn},
		{Detector: "egress", Scenario: "outbound-internet", Kind: "policy", Weakness: "network = true", mutate: networkOn},
		{Detector: "survivors", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "a process left running in the workspace, as an escaped child would be",
			inject: func(a *Arena) {
				cmd := exec.Command("sleep", "30")
				cmd.Dir = a.WS
				if cmd.Start() == nil {
					go func() { time.Sleep(6 * time.Second); cmd.Process.Kill(); cmd.Wait() }()
				}
			}},
		{Detector: "responsive", Scenario: "read-canary-dotdot", Kind: "staged",
			Weakness: "the server is stopped (SIGSTOP) before the check, as a wedged server would be",
			inject:   func(a *Arena) { a.pause() }},
		{Detector: "wall_time", Scenario: "sleep-past-timeout", Kind: "expectation",
			Weakness: "calls held to 0.5s while the policy lets them run 3s",
			expect:   func(e *Expect) { e.Timeout, e.Grace = 500*time.Millisecond, 0 }},
		{Detector: "output", Scenario: "output-flood-file", Kind: "expectation",
			Weakness: "streams held to 1KiB while max_output_bytes is 64KiB",
			expect:   func(e *Expect) { e.Output = 1 << 10 }},
		{Detector: "memory", Scenario: "memory-bomb", Kind: "expectation",
			Weakness: "memory held to 32MiB while limits.memory is 1GiB",
			mutate:   func(p *policy.Policy, _ *Arena) error { p.Limits.Memory = 1 << 30; return nil },
			expect:   func(e *Expect) { e.Memory = 32 << 20 }},
		{Detector: "disk", Scenario: "disk-fill", Kind: "expectation",
			Weakness: "files held to 1MiB while max_file_size is 64MiB",
			expect:   func(e *Expect) { e.FileSize = 1 << 20 }},
		// serve refuses to run commands as root, so no policy can weaken this one.
		{Detector: "privilege", Scenario: "setuid-root", Kind: "staged", NeedRoot: true,
			Weakness: "a root-owned file appears in the workspace, as a command that became root would leave",
			inject: func(a *Arena) {
				if os.WriteFile(filepath.Join(a.WS, "made-by-root"), []byte("x"), 0o644) == nil {
					os.Chown(filepath.Join(a.WS, "made-by-root"), 0, 0)
				}
			}},
		{Detector: "marker", Scenario: "planted-script-interpreter", Kind: "policy",
			Weakness: "an interpreter (python3) is allowlisted"},
		{Detector: "persistence", Scenario: "git-hooks-python", Kind: "policy",
			Weakness: "an interpreter (python3) is allowlisted and the workspace is writable"},
	}
}

// ControlPolicy is the base the controls weaken: the built-in allowlist plus python3 and sh,
// with a 3s timeout. On its own it contains every control's scenario except the two whose
// weakness is the interpreter itself.
func ControlPolicy() (*policy.Policy, error) {
	p, err := generate.DefaultAllowlist(os.TempDir())
	if err != nil {
		return nil, err
	}
	for name, candidates := range map[string][]string{
		// Debian's python3.X-minimal ships no python3 link: take the versioned binary then.
		"python3": {"python3", "python3.13", "python3.12", "python3.11"},
		"sh":      {"sh", "dash", "bash"},
	} {
		c, err := pinFirst(candidates)
		if err != nil {
			return nil, fmt.Errorf("the negative controls need %s on this host: %w", name, err)
		}
		c.Name = name
		p.Allowlist.Commands = append(p.Allowlist.Commands, c)
	}
	slices.SortFunc(p.Allowlist.Commands, func(a, b policy.Command) int { return strings.Compare(a.Name, b.Name) })
	p.Name = "harness-controls"
	p.Limits.Timeout = policy.Duration{Duration: 3 * time.Second}
	return p, nil
}

func pinFirst(names []string) (policy.Command, error) {
	var first error
	for _, n := range names {
		c, err := generate.Pin(n)
		if err == nil {
			return c, nil
		}
		if first == nil {
			first = err
		}
	}
	return policy.Command{}, first
}

// RunControls runs every control and reports whether its detector fired.
func RunControls(ctx context.Context, o Options) ([]ControlResult, error) {
	base, err := ControlPolicy()
	if err != nil {
		return nil, err
	}
	all, err := Load()
	if err != nil {
		return nil, err
	}
	byID := map[string]*Scenario{}
	for _, s := range all {
		byID[s.ID] = s
	}
	ctrls := Controls()
	out := make([]ControlResult, len(ctrls))
	for i, c := range ctrls {
		out[i].Control = c
		s := byID[c.Scenario]
		if s == nil {
			return nil, fmt.Errorf("control for %s names unknown scenario %s", c.Detector, c.Scenario)
		}
		if c.NeedRoot && os.Geteuid() != 0 {
			out[i].Outcome, out[i].Detail = Error, "could not run: needs root (run the harness as root to prove this detector)"
			continue
		}
		co := o
		co.Policy, co.mutate, co.expect, co.inject, co.Progress = base, c.mutate, c.expect, c.inject, nil
		if !slices.Contains(s.Detectors, c.Detector) {
			s = withDetector(s, c.Detector)
		}
		rep, err := Run(ctx, []*Scenario{s}, co)
		if err != nil {
			return nil, err
		}
		r := rep.Results[0]
		out[i].Outcome = r.Outcome
		out[i].Fired = slices.Contains(r.Breached(), c.Detector)
		out[i].Detail = r.Reason
		for _, f := range r.Findings {
			if f.Detector == c.Detector {
				out[i].Detail = f.Detail
			}
		}
	}
	return out, nil
}

func withDetector(s *Scenario, d string) *Scenario {
	c := *s
	c.Detectors = append(slices.Clone(s.Detectors), d)
	return &c
}
