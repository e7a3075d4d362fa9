//go:build !mcpsandbox_egresstest

package allowlist

import "net/netip"

// testEgressResolve: off in every binary not built for the egress tests (see
// egress_testhook_linux.go).
func testEgressResolve() (map[string][]netip.Addr, bool) { return nil, false }
