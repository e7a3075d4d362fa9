//go:build mcpsandbox_egresstest

package allowlist

import (
	"net/netip"
	"os"
	"strings"
)

// This file exists only in binaries built with -tags mcpsandbox_egresstest (the e2e tests build
// one for themselves): a production binary has no way to map names or to let the proxy reach
// loopback. TestEgressResolveEnv names the variable those test binaries read:
//
//	MCPSANDBOX_EGRESS_TEST_RESOLVE="index.test=127.0.0.1,forbidden.test=127.0.0.1"
//
// maps each name to the given addresses in the proxy's resolver (names not listed do not
// resolve at all, so nothing the tests do can reach a real resolver) and lets the proxy connect
// to loopback, where the tests' servers listen.
const TestEgressResolveEnv = "MCPSANDBOX_EGRESS_TEST_RESOLVE"

// testEgressResolve is the name map, and whether the test hook is on.
func testEgressResolve() (map[string][]netip.Addr, bool) {
	v, ok := os.LookupEnv(TestEgressResolveEnv)
	if !ok {
		return nil, false
	}
	m := map[string][]netip.Addr{}
	for _, kv := range strings.Split(v, ",") {
		name, addr, _ := strings.Cut(strings.TrimSpace(kv), "=")
		if a, err := netip.ParseAddr(addr); err == nil && name != "" {
			m[strings.ToLower(name)] = append(m[strings.ToLower(name)], a)
		}
	}
	return m, true
}
