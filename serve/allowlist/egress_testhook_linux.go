//go:build mcpsandbox_egresstest

package allowlist

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"strings"

	egressproxy "github.com/mcpsandbox/mcpsandbox/serve/egress"
)

// This file exists only in binaries built with -tags mcpsandbox_egresstest (the e2e tests build
// one for themselves): a production binary has no way to map names or to let the proxy reach
// loopback. The variable those test binaries read,
//
//	MCPSANDBOX_EGRESS_TEST_RESOLVE="index.test=127.0.0.1,forbidden.test=127.0.0.1"
//
// maps each name to the given addresses in the proxy's resolver (names not in the map do not
// resolve at all, so nothing the tests do can reach a real resolver) and, when the map names
// any, lets the proxy connect to loopback, where the tests' servers listen. Set but empty, it
// only keeps the proxy off real resolvers (the harness runs that way: loopback stays denied).
const TestEgressResolveEnv = "MCPSANDBOX_EGRESS_TEST_RESOLVE"

type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	var out []netip.Addr
	for _, a := range m[strings.ToLower(strings.TrimSuffix(host, "."))] {
		if network == "ip" || (network == "ip4") == a.Is4() {
			out = append(out, a)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("lookup %s: no such host (test resolver)", host)
	}
	return out, nil
}

// testEgressResolver is the test's name map, whether loopback is re-opened, and whether the
// test hook is on.
func testEgressResolver() (r egressproxy.Resolver, loopback, on bool) {
	v, ok := os.LookupEnv(TestEgressResolveEnv)
	if !ok {
		return nil, false, false
	}
	m := mapResolver{}
	for _, kv := range strings.Split(v, ",") {
		name, addr, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if a, err := netip.ParseAddr(addr); err == nil && name != "" {
			m[strings.ToLower(name)] = append(m[strings.ToLower(name)], a)
		}
	}
	return m, len(m) > 0, true
}
