package harness

import (
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The harness reads and writes each scheme's network key through the policy's section, so
// every scheme with a network key gets host lists and the others are refused by name.
func TestNetworkHostsThroughSections(t *testing.T) {
	for _, s := range policy.Schemes {
		p := policy.Default(s)
		_, has := p.Section().Network()
		if hostList(p) || networkOpen(p) {
			t.Errorf("%s: the default policy's network is not closed", s)
		}
		err := AddNetworkHosts(p, "a.example.com")
		if !has {
			if err == nil || !strings.Contains(err.Error(), "the "+s+" scheme has no network host lists") {
				t.Errorf("%s: AddNetworkHosts = %v, want a refusal", s, err)
			}
			if got := needsHostList(p); got != "needs a network host list: the "+s+" scheme has none" {
				t.Errorf("%s: needsHostList = %q", s, got)
			}
			continue
		}
		if err != nil || !hostList(p) {
			t.Fatalf("%s: AddNetworkHosts: %v (host list %v)", s, err, hostList(p))
		}
		if err := AddNetworkHosts(p, "b.example.com"); err != nil || netString(p) != `["a.example.com", "b.example.com"]` {
			t.Errorf("%s: after a second add: %v %s", s, err, netString(p))
		}
		if err := SetNetworkHosts(p, "c.example.com"); err != nil || netString(p) != `["c.example.com"]` {
			t.Errorf("%s: SetNetworkHosts: %v %s", s, err, netString(p))
		}
		if want := "(" + s + `.network = ["host", ...]); this policy's network is ["c.example.com"]`; !strings.HasSuffix(needsHostList(p), want) {
			t.Errorf("%s: needsHostList = %q", s, needsHostList(p))
		}
		if err := p.Validate(); err != nil && strings.Contains(err.Error(), ".network") {
			t.Errorf("%s: the host list does not validate: %v", s, err)
		}
	}
	p := policy.Default(alsec.Name)
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
	d := policy.Default(dksec.Name)
	dksec.Of(d).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
	if !networkOpen(p) || !networkOpen(d) {
		t.Error("network true / a docker network is not open")
	}
}
