package allowlist

import (
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// proof: the first allowed command asked for its version (a call that reads and writes
// nothing, through every layer a call gets).
func proof(p *policy.Policy) *generate.ProofCall {
	if len(alsec.Of(p).Commands) == 0 {
		return nil
	}
	return &generate.ProofCall{Tool: "run_allowed_command",
		Args: map[string]any{"command": alsec.Of(p).Commands[0].Name, "args": []string{"--version"}}}
}
