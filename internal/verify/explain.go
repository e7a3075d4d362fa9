package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Status says how well a threat is covered.
type Status string

// The statuses.
const (
	Enforced    Status = "enforced"
	Partly      Status = "partly"
	NotEnforced Status = "NOT enforced"
)

// Threat is one line of `explain`: what an attacker wants, and what on this host stops it.
type Threat struct {
	Threat    string   `json:"threat"`
	Status    Status   `json:"status"`
	By        []string `json:"by"`
	Note      string   `json:"note,omitempty"`
	Scenarios []string `json:"scenarios"` // the harness scenarios that attack it
	// Attacks says, for a threat the policy's own choice leaves open, what its scenarios can
	// show: the layers that still hold, not the gap (trial37 F9: a reader told "NOT enforced
	// ... Evidence: harness" ran them and got only CONTAINED and N/A).
	Attacks string `json:"attacks,omitempty"`
}

// ThreatRule is one threat a scheme faces and what answers it; each scheme lists its own.
type ThreatRule struct {
	Threat string
	Layers []string                    // layer IDs (the executor's constants): any active one enforces it
	Server bool                        // enforced by serve itself, whatever the host
	By     string                      // with Server: what in serve enforces it
	Caveat string                      // enforced, but only partly
	Gap    func(*policy.Policy) string // a policy choice that undoes it
	// ClosableGap is a policy choice's gap that the layer ClosedBy closes where it is active
	// (an interpreter's writes, judged by the transactional workspace).
	ClosableGap func(*policy.Policy) string
	ClosedBy    string
	// CaveatOf, when set, is the caveat for this policy and the layers in force here (over
	// Caveat): what bounds a threat can depend on which layers this host gives.
	CaveatOf func(p *policy.Policy, inForce func(layer string) bool) string
	// Opening is a policy choice that opens only what it names (a directory, listed hosts,
	// named variables): where the layers are in force they hold for everything else, so the
	// threat is partly enforced, the note naming what is open; a choice that opens it all is a Gap
	// (trial35 F5: "NOT enforced  read secrets in HOME" for one data directory in wrap.read).
	Opening   func(p *policy.Policy, inForce func(layer string) bool) string
	Scenarios []string
	// ShownBy are the scenarios (of Scenarios) that go through the Gap when the policy opens it:
	// they breach, which shows the gap; the others attack the layers that still hold.
	ShownBy []string
}

// gapAttacks is what a NOT enforced row's scenarios show when the policy's own choice opened the
// gap: which go through it (BREACH) and that the rest attack what still holds (by).
func gapAttacks(shownBy, by []string) string {
	s := "the gap is the policy's choice (above): "
	if len(shownBy) > 0 {
		verb := " goes"
		if len(shownBy) > 1 {
			verb = " go"
		}
		s += strings.Join(shownBy, ", ") + verb + " through it (expect BREACH, the gap shown, or N/A where the policy lacks what it runs); the rest attack"
	} else {
		s += "a scenario that goes through it breaches, which shows the gap; the rest attack"
	}
	s += " what still holds"
	if len(by) > 0 {
		s += " (" + strings.Join(by, ", ") + ")"
	}
	return s + ": expect them CONTAINED, or N/A where the policy lacks what they run"
}

// Explain maps every threat the scheme faces to the layers in force on this host (as `serve
// --check` measured them) and says plainly which are not enforced.
func Explain(p *policy.Policy, layers []executor.Layer, rules []ThreatRule) ([]Threat, error) {
	if len(rules) == 0 {
		return nil, fmt.Errorf("explain knows no threats for the %q scheme in this build", p.Scheme)
	}
	active := map[string]executor.Layer{}
	for _, l := range layers {
		if l.Active {
			active[l.Name] = l
		}
	}
	var out []Threat
	for _, r := range rules {
		t := Threat{Threat: r.Threat, Scenarios: r.Scenarios}
		for _, name := range r.Layers {
			if _, ok := active[name]; ok {
				t.By = append(t.By, name)
			}
		}
		if r.Server {
			by := r.By
			if by == "" {
				by = "serve (argument checks, output cap, timeout)"
			}
			t.By = append(t.By, by)
		}
		gap := ""
		if r.Gap != nil {
			gap = r.Gap(p)
		}
		if gap == "" && r.ClosableGap != nil {
			if g := r.ClosableGap(p); g != "" {
				if _, ok := active[r.ClosedBy]; ok {
					t.By = append(t.By, r.ClosedBy)
				} else {
					gap = g
				}
			}
		}
		inForce := func(name string) bool { _, ok := active[name]; return ok }
		caveat := r.Caveat
		if r.CaveatOf != nil {
			caveat = r.CaveatOf(p, inForce)
		}
		if gap == "" && r.Opening != nil {
			if o := r.Opening(p, inForce); o != "" {
				if mutated("explain-opening-not-enforced") {
					gap = o
				} else if caveat != "" {
					caveat = o + "; " + caveat
				} else {
					caveat = o
				}
			}
		}
		switch {
		case gap != "":
			t.Status, t.Note = NotEnforced, gap
			if len(t.Scenarios) > 0 && !mutated("explain-gap-scenarios-unexplained") {
				t.Attacks = gapAttacks(r.ShownBy, t.By)
			}
		case len(t.By) == 0:
			t.Status = NotEnforced
			t.Note = "nothing on this host enforces it"
			for _, l := range layers {
				if slices.Contains(r.Layers, l.Name) && !l.Active {
					t.Note = l.Detail + " (" + l.Name + ")"
					break
				}
			}
		case caveat != "":
			t.Status, t.Note = Partly, caveat
		default:
			t.Status = Enforced
		}
		out = append(out, t)
	}
	return out, nil
}

// Layers runs `BIN serve --policy PATH --check --json` and returns the layers it measured: the
// same probe serve makes before it answers a client. A policy serve cannot start here only for
// what this environment lacks (e2b's API key) still has its layers: they come with a
// *NotReadyError saying what is lacking. Any other refusal is serve's own message, without its
// log lines or an exit status (trial37 F6: "serve --check: exit status 1: time=… level=INFO …").
func Layers(ctx context.Context, bin, path string) ([]executor.Layer, error) {
	cmd := exec.CommandContext(ctx, bin, "serve", "--policy", path, "--check", "--json")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var v struct {
		Layers   []executor.Layer `json:"layers"`
		NotReady *NotReady        `json:"not_ready"`
	}
	if err != nil {
		if json.Unmarshal(out, &v) == nil && v.NotReady != nil && len(v.Layers) > 0 {
			return v.Layers, &NotReadyError{NotReady: *v.NotReady}
		}
		if mutated("explain-serve-log-in-error") {
			return nil, fmt.Errorf("serve --check: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		if msg := serveMessage(stderr.String()); msg != "" {
			return nil, &CheckError{Msg: msg, Err: err}
		}
		return nil, fmt.Errorf("serve --check: %w", err)
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return nil, fmt.Errorf("serve --check printed something that is not its JSON report: %w", err)
	}
	return v.Layers, nil
}

// NotReady is what serve lacks here before it starts (`serve --check --json`'s "not_ready").
type NotReady struct {
	Until string `json:"until"` // "$E2B_API_KEY is set"
	Why   string `json:"why"`   // the reason and its fix
}

// NotReadyError comes with the layers of a policy serve will not start here until Until holds.
type NotReadyError struct{ NotReady }

func (e *NotReadyError) Error() string { return e.Why }

// CheckError is serve's refusal of a policy at `serve --check`: its own final message.
type CheckError struct {
	Msg string
	Err error // the exit status
}

func (e *CheckError) Error() string { return e.Msg }
func (e *CheckError) Unwrap() error { return e.Err }

// serveMessage is serve's error in its stderr: from its last "mcpsandbox: " line on, without
// that prefix (the caller says mcpsandbox itself); the log lines before it (time=… level=…) are
// how serve got there, not why it refused.
func serveMessage(stderr string) string {
	s := strings.TrimSpace(stderr)
	const prefix = "mcpsandbox: "
	if i := strings.LastIndex("\n"+s, "\n"+prefix); i >= 0 {
		return strings.TrimSpace(s[i+len(prefix):])
	}
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.HasPrefix(l, "time=") {
			keep = append(keep, l)
		}
	}
	return strings.TrimSpace(strings.Join(keep, "\n"))
}
