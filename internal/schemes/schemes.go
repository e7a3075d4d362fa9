// Package schemes is the registry: every isolation scheme this build knows, one line each.
// Adding a scheme is its directory, internal/schemes/NAME: its entry (everything serve, init, verify,
// the harness and bench ask of it, its commented policy template and its own scenario steps),
// its policy section (internal/schemes/NAME/section) and its executor (internal/schemes/NAME/sandbox); and one
// line here (README: "Adding a scheme"). Shared code asks this registry and names no scheme
// (internal/lint).
package schemes

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// All lists the schemes in the order the product presents them.
var All = []*scheme.Scheme{
	allowlist.Scheme,
	docker.Scheme,
	e2b.Scheme,
	wrap.Scheme,
}

// init hands each entry's policy template to generate, which renders the policy file init
// writes and names no scheme.
func init() {
	for _, s := range All {
		if s.PolicyTemplate != "" {
			generate.RegisterPolicyTemplate(s.Name, s.PolicyTemplate)
		}
	}
}

// Lookup returns the scheme of that name.
func Lookup(name string) (*scheme.Scheme, error) {
	i := slices.IndexFunc(All, func(s *scheme.Scheme) bool { return s.Name == name })
	if i < 0 {
		return nil, fmt.Errorf("unknown scheme %q: use one of %s", name, strings.Join(policy.Schemes, ", "))
	}
	return All[i], nil
}

// For returns the scheme a policy names.
func For(p *policy.Policy) (*scheme.Scheme, error) { return Lookup(p.Scheme) }

// Wizards are init's parts of the schemes it offers (those with a Wizard), by name.
func Wizards() map[string]*generate.Wizard {
	ws := map[string]*generate.Wizard{}
	for _, s := range All {
		if s.Wizard != nil {
			ws[s.Name] = s.Wizard
		}
	}
	return ws
}

// Offered lists the schemes init offers, in the product's order.
func Offered() []string {
	var out []string
	for _, s := range All {
		if s.Wizard != nil {
			out = append(out, s.Name)
		}
	}
	return out
}

// Rules lists every audit rule: the common ones, then each scheme's, for `verify` and the README.
func Rules() []verify.Rule {
	rs := slices.Clone(verify.CommonRules)
	for _, s := range All {
		rs = append(rs, s.Audit.Rules...)
	}
	slices.SortFunc(rs, func(a, b verify.Rule) int { return strings.Compare(a.ID, b.ID) })
	return rs
}

// Doctor is verify's host report: every scheme's Host rows, then the shared ones.
func Doctor(ctx context.Context) []verify.Check {
	var rows [][]verify.Check
	for _, s := range All {
		if s.Host != nil {
			rows = append(rows, s.Host(ctx))
		}
	}
	return verify.Doctor(rows...)
}
