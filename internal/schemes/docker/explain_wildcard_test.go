package docker

import (
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A wildcard in docker.network is a way out through DNS: the network gap says so, with its
// bound; a list of exact names has no such sentence.
func TestNetworkGapWildcard(t *testing.T) {
	p := policy.Default(dksec.Name)
	exact, err := policy.NetworkHosts("pypi.org")
	if err != nil {
		t.Fatal(err)
	}
	dksec.Of(p).SetNet(exact)
	if g := networkOpening(p, nil); strings.Contains(g, "wildcard") {
		t.Errorf("exact names: %q", g)
	}
	wild, err := policy.NetworkHosts("pypi.org", "*.example.com")
	if err != nil {
		t.Fatal(err)
	}
	dksec.Of(p).SetNet(wild)
	if g := networkOpening(p, nil); !strings.Contains(g, "*.example.com lets a program make serve resolve any name below it") || !strings.Contains(g, "64 distinct names per container") {
		t.Errorf("wildcard: %q", g)
	}
}
