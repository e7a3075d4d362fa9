package schemes

import (
	"os"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every scheme lists its bounds through the registry (a host list adds its egress proxy's),
// they take the policy's values, and the README's bounds table names every policy key they use.
func TestBoundsOfEveryScheme(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	i := strings.Index(string(readme), "## Bounds at every boundary")
	if i < 0 {
		t.Fatal("README has no bounds section")
	}
	table := string(readme[i:])
	hosts, err := policy.NetworkHosts("pypi.org")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range All {
		p := policy.Default(s.Name)
		p.Limits.EgressConnections = 5
		alsec.Of(p).SetNet(hosts)
		dksec.Of(p).SetNet(hosts)
		wrapsec.Of(p).SetNetwork(hosts)
		bs := s.AllBounds(p)
		egress := false
		for _, b := range bs {
			if b.Key == "limits.egress_connections" {
				egress = true
				if b.Value != "5" || !strings.Contains(b.Past, "other sandboxes are not affected") {
					t.Errorf("%s: egress bound %+v", s.Name, b)
				}
			}
			if b.Key != "" && !strings.Contains(table, "`"+b.Key+"`") {
				t.Errorf("README's bounds table does not name %s (%s: %s)", b.Key, s.Name, b.What)
			}
			if b.What == "" || b.Value == "" || b.Past == "" {
				t.Errorf("%s: incomplete bound %+v", s.Name, b)
			}
		}
		if want := policy.NetworkTakes(s.Name, policy.NetHosts); egress != want { // a scheme with a host list has its egress proxy
			t.Errorf("%s with a host list: egress bound listed = %v, want %v", s.Name, egress, want)
		}
	}
}
