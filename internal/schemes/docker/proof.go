package docker

import (
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// proof: an empty shell script in a container made as every call's is (image, mounts, runtime,
// user, network).
func proof(*policy.Policy) *generate.ProofCall {
	return &generate.ProofCall{Tool: sd.ToolShell, Args: map[string]any{"script": "exit 0"}}
}
