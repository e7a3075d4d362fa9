package e2b

import (
	"context"
	"os"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// measured is verify's row for what serve needs here to run an e2b policy: its API key's
// variable set. serve stops at start without it, so no call could run; the row blocks the
// harness and verify fails, where it said PASS with rows about this host's kernel and Docker,
// which the e2b scheme does not use (trial33 F6).
func measured(_ context.Context, _, policyPath string) []verify.Check {
	p, err := policy.Load(policyPath)
	if err != nil {
		return nil
	}
	key := e2bsec.Of(p).APIKeyEnv
	if key == "" {
		key = "E2B_API_KEY"
	}
	c := verify.Check{Name: "e2b api key", OK: true, Value: "$" + key + " is set here (the client must start serve with it too)"}
	switch {
	case os.Getenv(key) != "" || mutated("verify-e2b-key-blocks"):
	case offlineBuilt && !live():
		// a test build's harness attacks the local E2B server, with a key of its own
		c.Value = "$" + key + " is empty (serve would stop at start; this test build's harness runs against the local E2B server with a key of its own)"
	default:
		c.OK, c.Blocks = false, true
		c.Value = "$" + key + " is empty or unset (serve would stop at start the same way)"
		c.Advice = "export " + key + "=… (the key from e2b.dev/dashboard) here, and in the environment your MCP client starts servers with"
	}
	return []verify.Check{c}
}
