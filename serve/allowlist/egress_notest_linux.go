//go:build !mcpsandbox_egresstest

package allowlist

import egressproxy "github.com/mcpsandbox/mcpsandbox/serve/egress"

// testEgressResolver: off in every binary not built for the egress tests (see
// egress_testhook_linux.go).
func testEgressResolver() (r egressproxy.Resolver, loopback, on bool) { return nil, false, false }
