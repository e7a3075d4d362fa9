// Package e2b is the e2b scheme's entry in the registry: a proxy to E2B cloud sandboxes with
// mcpsandbox's limits, audit and lifecycle.
package e2b

import (
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/scheme"
	"github.com/mcpsandbox/mcpsandbox/verify"
)

// Rules are the e2b scheme's audit rules (MS301, a key written in the file, is common to all).
var Rules = []verify.Rule{
	{ID: "MS302", Severity: verify.Medium, Title: "E2B sandboxes may reach the internet"},
	{ID: "MS303", Severity: verify.Low, Title: "E2B sandboxes are reused for a whole session: calls see each other's files"},
}

// Scheme is the registry entry.
var Scheme = &scheme.Scheme{
	Name:        policy.SchemeE2B,
	Summary:     "a proxy to E2B cloud sandboxes (microVMs), with mcpsandbox's limits and audit",
	Unavailable: "the e2b executor is not in this build yet; use the allowlist scheme",
	Audit:       verify.Auditor{Rules: Rules, Check: audit},
}

func audit(p *policy.Policy, add verify.Add) {
	if p.E2B.AllowInternet {
		add("MS302", "e2b.allow_internet", "sandboxes can reach the internet: anything they read can leave", "set allow_internet = false")
	}
	if p.E2B.Reuse == "session" {
		add("MS303", "e2b.reuse", "one sandbox serves a whole session: a call sees what earlier calls left", `set reuse = "call" for a fresh sandbox each call`)
	}
}
