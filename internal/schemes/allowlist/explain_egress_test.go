package allowlist

import (
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// explain lists the hosts a host list makes reachable, and says the proxy (with the network
// namespace) is what keeps every other host out; network = true undoes both.
func TestExplainHostList(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc"}}
	hosts, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org:443")
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(hosts)
	layers := []executor.Layer{{Name: sa.LayerNetNS, Active: true}, {Name: sa.LayerSeccomp, Active: true},
		{Name: sa.LayerEgressProxy, Active: true}}
	find := func(ts []verify.Threat, prefix string) verify.Threat {
		for _, th := range ts {
			if strings.HasPrefix(th.Threat, prefix) {
				return th
			}
		}
		t.Fatalf("no threat %q", prefix)
		return verify.Threat{}
	}
	ts, err := verify.Explain(p, layers, Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	if th := find(ts, "reach the network"); !strings.Contains(th.Note, "pypi.org, files.pythonhosted.org:443") {
		t.Errorf("reachable hosts not listed: %+v", th)
	}
	if th := find(ts, "reach a host the network list does not name"); th.Status != verify.Enforced {
		t.Errorf("unlisted hosts: %+v", th)
	}
	// a wildcard is a way out through DNS: explain says so, with its bound
	wild, err := policy.NetworkHosts("pypi.org", "*.example.com")
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).SetNet(wild)
	ts, _ = verify.Explain(p, layers, Scheme.Threats)
	if th := find(ts, "reach a host the network list does not name"); th.Status != verify.NotEnforced ||
		!strings.Contains(th.Note, "*.example.com lets a program make serve resolve any name below it") || !strings.Contains(th.Note, "64 distinct names per call") {
		t.Errorf("wildcard: %+v", th)
	}
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
	ts, _ = verify.Explain(p, layers, Scheme.Threats)
	if th := find(ts, "reach a host the network list does not name"); th.Status != verify.NotEnforced {
		t.Errorf("network = true but: %+v", th)
	}
	alsec.Of(p).SetNet(policy.Network{Mode: policy.NetNone})
	ts, _ = verify.Explain(p, layers, Scheme.Threats)
	if th := find(ts, "reach the network"); th.Status != verify.Enforced {
		t.Errorf("network = false: %+v", th)
	}
}

// explain's "fill the disk" names what bounds a call's writes on this host: per file always,
// and the workspace quota where the transactional workspace is in force (with the private
// /tmp named as what the quota leaves open); without that layer it says nothing caps the count.
func TestExplainDiskFill(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc"}}
	p.Limits.WorkspaceQuota = 256 << 20
	disk := func(layers []executor.Layer) verify.Threat {
		ts, err := verify.Explain(p, layers, Scheme.Threats)
		if err != nil {
			t.Fatal(err)
		}
		for _, th := range ts {
			if th.Threat == "fill the disk" {
				return th
			}
		}
		t.Fatal("no threat \"fill the disk\"")
		return verify.Threat{}
	}
	rl := executor.Layer{Name: sa.LayerRlimits, Active: true}
	th := disk([]executor.Layer{rl, {Name: sa.LayerWorkspace, Active: true}})
	if th.Status != verify.Partly || !strings.Contains(th.Note, "limits.workspace_quota (256MiB") ||
		!strings.Contains(th.Note, "tmpfs") || strings.Contains(th.Note, "nothing caps") ||
		!slices.Contains(th.By, sa.LayerWorkspace) {
		t.Errorf("with the transactional workspace: %+v", th)
	}
	th = disk([]executor.Layer{rl, {Name: sa.LayerWorkspace, Detail: "overlayfs could not be mounted"}})
	if th.Status != verify.Partly || !strings.Contains(th.Note, "nothing caps how many files") || strings.Contains(th.Note, "workspace_quota") {
		t.Errorf("without the transactional workspace: %+v", th)
	}
}
