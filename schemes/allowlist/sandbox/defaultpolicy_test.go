package sandbox

import (
	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// defaultPolicy is the scheme's built-in policy over ws, as schemes/allowlist builds it (which
// imports this package, so its tests cannot): the default commands found here, pinned now, no
// network.
func defaultPolicy(ws string) (*policy.Policy, error) {
	cs, err := generate.PinDefaults()
	if err != nil {
		return nil, err
	}
	p := policy.Default(policy.SchemeAllowlist)
	p.Allowlist.Workspace, p.Allowlist.Commands = ws, cs
	return p, p.Validate()
}
