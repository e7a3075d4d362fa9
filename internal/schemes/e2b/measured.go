package e2b

import (
	"context"
	"errors"
	"os"
	"time"

	se "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// measured is verify's rows for what serve needs here to run an e2b policy: its API key's
// variable set, and E2B's API answering with it. serve stops at start without the key, so no call
// could run; the row blocks the harness and verify fails, where it said PASS with rows about this host's kernel and Docker,
// which the e2b scheme does not use (trial33 F6).
func measured(ctx context.Context, _, policyPath string) []verify.Check {
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
	if os.Getenv(key) == "" || mutated("verify-e2b-api-unasked") {
		return []verify.Check{c}
	}
	if why := e2bsec.Of(p).KeyElsewhere(); why != "" && !live() && !mutated("verify-e2b-api-unconsented") {
		// a policy someone gave the user chose the secret or the address: verify sends nothing
		// there unasked (atk37b F3; serve would, and MS305 says so)
		return []verify.Check{c, {Name: "e2b api", OK: true,
			Value:  "not asked: the policy's " + why + "; verify sends no key where a policy file chose unless you say so",
			Advice: "to send $" + key + " there and check the answer: " + LiveEnv + "=1 mcpsandbox verify …"}}
	}
	return []verify.Check{c, apiRow(ctx, p, key)}
}

// apiRow asks E2B's API what serve asks at its start, with the key: every call fails when it
// cannot be reached or refuses the key, and verify said PASS without asking (trial37 F7). The
// harness of a test build not run live attacks the local E2B server, so there a failure here
// does not stop it.
func apiRow(ctx context.Context, p *policy.Policy, key string) verify.Check {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	url, err := se.Probe(ctx, p, se.Options{})
	c := verify.Check{Name: "e2b api", OK: true, Value: url + " answered with the key in $" + key + " (its list of sandboxes, as serve asks at start; no sandbox made)"}
	if err == nil {
		return c
	}
	c.OK, c.Blocks = false, !(offlineBuilt && !live())
	switch {
	case errors.Is(err, se.ErrUnauthorized):
		c.Value = "key refused (401): " + err.Error()
		c.Advice = "set " + key + " to a valid key from https://e2b.dev/dashboard?tab=keys, here and in the environment your MCP client starts servers with"
	case errors.Is(err, se.ErrUnreachable):
		c.Value = "unreachable: " + err.Error()
		c.Advice = "every call would fail the same way: serve needs E2B's API from this host (a proxy is taken from HTTPS_PROXY)"
	default:
		c.Value = err.Error()
		c.Advice = "every call would fail the same way at serve's start"
	}
	return c
}

// probeTimeout bounds verify's question to E2B's API (a list: one request, at most a few retries).
const probeTimeout = 20 * time.Second
