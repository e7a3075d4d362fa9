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

// explain's bounds for a relay (wrap) are what the relay enforces (attack round 15b): serve's
// call, stdio and HTTP bounds were listed for a wrap policy too ("wall clock per call: the call's
// process tree is killed", "one JSON-RPC message: 16MiB"), which the relay does not do (its
// timeout answers the call, its frame limit is 4 MiB, it has no HTTP). Its own bounds and the
// audit log's stay; a scheme serving tools keeps serve's.
func TestRelayBoundsAreTheRelays(t *testing.T) {
	for _, s := range All {
		served := map[string]bool{}
		for _, b := range s.AllBounds(policy.Default(s.Name)) {
			served[b.Boundary] = true
		}
		relay := s.Relay != nil
		for _, where := range []string{"calls", "stdio", "http", "stdio, http"} {
			if served[where] == relay {
				t.Errorf("%s (relay %v): %q bounds listed = %v", s.Name, relay, where, served[where])
			}
		}
		if !served["audit"] {
			t.Errorf("%s: the audit log's bounds are not listed", s.Name)
		}
		if relay && !served["wrap"] {
			t.Errorf("%s: the relay's own bounds are not listed", s.Name)
		}
	}
}
