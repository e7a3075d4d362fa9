package allowlist

import (
	"path/filepath"
	"slices"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// MS107 is "every host": a host list init writes (and the policy file it renders, loaded back)
// is not reported as one; every host is, however it was set.
func TestAuditNetworkHostList(t *testing.T) {
	ws := t.TempDir()
	build := func(a generate.Answers) *policy.Policy {
		t.Helper()
		a.Scheme, a.Wizards = alsec.Name, map[string]*generate.Wizard{alsec.Name: wizard}
		Own(&a).Workspace, Own(&a).Allow = ws, []string{"wc"}
		p, err := generate.BuildPolicy(a)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "policy.toml")
		b, err := generate.RenderPolicy(p, path)
		if err != nil {
			t.Fatal(err)
		}
		back, err := policy.Parse(path, b)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	if got := rules(auditOf(build(generate.Answers{Hosts: []string{"pypi", "api.example.com:443"}}), "")); slices.Contains(got, "MS107") {
		t.Errorf("a host list reported as every host: %v", got)
	}
	// Negative controls: every host is reported, from init's flag and from the key alone.
	if got := rules(auditOf(build(generate.Answers{Network: true}), "")); !slices.Contains(got, "MS107") {
		t.Errorf("network = true not reported: %v", got)
	}
	p := build(generate.Answers{})
	alsec.Of(p).Egress = policy.Network{Mode: policy.NetAll} // the key set, the old view not
	if got := rules(auditOf(p, "")); !slices.Contains(got, "MS107") {
		t.Errorf("network = true (Egress only) not reported: %v", got)
	}
}
