package docker

import (
	"path/filepath"
	"slices"
	"strings"
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

// TestAuditRootUserWrittenWithZeros: the engine reads a numeric uid as a number, so user =
// "00:00" or "000" runs as root (measured: `docker run --user 00:00 … id` says uid=0(root)); the
// audit's MS202 named only "0" and "root" and let them pass silently.
func TestAuditRootUserWrittenWithZeros(t *testing.T) {
	rules := func(user string) []string {
		p := policy.Default(dksec.Name)
		dksec.Of(p).User = user
		var got []string
		for _, f := range verify.Audit(p, "", Scheme.Audit) {
			got = append(got, f.Rule)
		}
		return got
	}
	for _, u := range []string{"0", "0:0", "root", "root:root", "00:00", "000", "0000:65534", ""} {
		if got := rules(u); !slices.Contains(got, "MS202") {
			t.Errorf("user = %q runs as root, but the audit does not say so: %v", u, got)
		}
	}
	for _, u := range []string{"65534:65534", "1000:1000", "10", "100:0", "nobody"} {
		if got := rules(u); slices.Contains(got, "MS202") {
			t.Errorf("user = %q is not root, but the audit says it is: %v", u, got)
		}
	}
}

// TestExplainRootUserGap: explain's privileges row names the gap for every spelling of root,
// not only "0", "root" and "0:0".
func TestExplainRootUserGap(t *testing.T) {
	var gap func(*policy.Policy) string
	for _, r := range threats {
		if strings.HasPrefix(r.Threat, "gain privileges") {
			gap = r.Gap
		}
	}
	if gap == nil {
		t.Fatal("no privileges row in explain's threats")
	}
	for _, u := range []string{"0", "root", "0:0", "00:00", "000", "root:root", "0:1000"} {
		p := policy.Default(dksec.Name)
		dksec.Of(p).User = u
		if g := gap(p); !strings.Contains(g, "root") {
			t.Errorf("user = %q runs as root; explain's gap says %q", u, g)
		}
	}
	if g := gap(policy.Default(dksec.Name)); g != "" {
		t.Errorf("the default user is not root; explain's gap says %q", g)
	}
}

// TestExplainDiskGapReadWrite: with read_only = false a call wrote 458 MB of /var/tmp in 20 s
// (the container's own layer, on the engine's disk, has no size bound; measured with the test
// image); explain's disk row said "partly" without saying where the way out is.
func TestExplainDiskGapReadWrite(t *testing.T) {
	p := policy.Default(dksec.Name)
	if g := diskGap(p); g != "" {
		t.Errorf("read_only = true: explain's disk gap says %q", g)
	}
	dksec.Of(p).ReadOnly = false
	if g := diskGap(p); !strings.Contains(g, "read_only = false") || !strings.Contains(g, "engine's disk") {
		t.Errorf("read_only = false: explain's disk gap says %q", g)
	}
}

// TestStateGapNamedNetwork: on a docker network, containers of concurrent calls and of other
// sessions reach each other (measured by TestNamedNetworkJoinsSessions: session B read what
// session A's container served); explain's state row said "sessions never share one" and no
// more. network = "none" and host lists give containers no network of their own.
func TestStateGapNamedNetwork(t *testing.T) {
	for _, reuse := range []string{"call", "session"} {
		p := policy.Default(dksec.Name)
		dksec.Of(p).Reuse = reuse
		if g := stateGap(p); strings.Contains(g, "each other") {
			t.Errorf("reuse = %s, network none: explain's state gap says %q", reuse, g)
		}
		hosts, err := policy.NetworkHosts("pypi.org")
		if err != nil {
			t.Fatal(err)
		}
		dksec.Of(p).SetNet(hosts)
		if g := stateGap(p); strings.Contains(g, "each other") {
			t.Errorf("reuse = %s, a host list: explain's state gap says %q", reuse, g)
		}
		dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
		if g := stateGap(p); !strings.Contains(g, `docker.network = "bridge"`) || !strings.Contains(g, "each other") {
			t.Errorf("reuse = %s, network bridge: explain's state gap says %q", reuse, g)
		}
	}
}
