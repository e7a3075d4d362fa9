package docker

import (
	"path/filepath"
	"slices"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// MS201 is "joins a docker network": the host list init writes (the rendered file, loaded back)
// is not one; a docker network the wizard's "every host" picks is.
func TestAuditInitNetwork(t *testing.T) {
	audit := func(a generate.Answers, network string) []string {
		t.Helper()
		a.Scheme, a.Wizards = dksec.Name, map[string]*generate.Wizard{dksec.Name: wizard}
		if network != "" {
			Own(&a).NetworkName = network
		}
		p, err := generate.BuildPolicy(a)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "policy.toml")
		b, err := generate.RenderPolicy(p, path)
		if err != nil {
			t.Fatal(err)
		}
		if p, err = policy.Parse(path, b); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, f := range verify.Audit(p, "", Scheme.Audit) {
			got = append(got, f.Rule)
		}
		return got
	}
	if got := audit(generate.Answers{Hosts: []string{"npm", "github"}}, ""); slices.Contains(got, "MS201") {
		t.Errorf("a host list reported as a docker network: %v", got)
	}
	if got := audit(generate.Answers{}, "bridge"); !slices.Contains(got, "MS201") {
		t.Errorf("network = \"bridge\" not reported: %v", got)
	}
}
