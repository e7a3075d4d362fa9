package sandbox

import (
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// defaultPolicy is the scheme's built-in policy over ws, as internal/schemes/allowlist builds it (which
// imports this package, so its tests cannot): the default commands found here, pinned now, no
// network.
func defaultPolicy(ws string) (*policy.Policy, error) {
	cs, err := generate.PinDefaults()
	if err != nil {
		return nil, err
	}
	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace, alsec.Of(p).Commands = ws, cs
	return p, p.Validate()
}
