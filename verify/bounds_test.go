package verify

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Bounds come from the policy (a changed key shows its new value) and the egress rows appear
// only where there is a host list; every key it names is in the README's bounds table.
func TestBoundsFollowThePolicy(t *testing.T) {
	p := policy.Default(policy.SchemeDocker)
	p.Limits.MaxSessions, p.Limits.EgressConnections = 7, 5
	find := func(bs []Bound, key string) *Bound {
		for i := range bs {
			if bs[i].Key == key {
				return &bs[i]
			}
		}
		return nil
	}
	bs := Bounds(p)
	if b := find(bs, "limits.max_sessions"); b == nil || b.Value != "7" {
		t.Errorf("max_sessions bound: %+v", b)
	}
	if b := find(bs, "limits.egress_connections"); b != nil {
		t.Errorf("an egress bound without a host list: %+v", b)
	}
	n, err := policy.NetworkHosts("pypi.org")
	if err != nil {
		t.Fatal(err)
	}
	p.Docker.SetNet(n)
	bs = Bounds(p)
	b := find(bs, "limits.egress_connections")
	if b == nil || b.Value != "5" || !strings.Contains(b.What, "container") || !strings.Contains(b.Past, "503") {
		t.Errorf("docker egress bound: %+v", b)
	}
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	table := string(readme)
	if i := strings.Index(table, "## Bounds at every boundary"); i >= 0 {
		table = table[i:]
	} else {
		t.Fatal("README has no bounds section")
	}
	for _, b := range bs {
		if b.Key != "" && !strings.Contains(table, "`"+b.Key+"`") {
			t.Errorf("README's bounds table does not name %s (%s)", b.Key, b.What)
		}
	}
}
