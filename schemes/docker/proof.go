package docker

import (
	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	sd "github.com/mcpsandbox/mcpsandbox/schemes/docker/sandbox"
)

// proof: an empty shell script in a container made as every call's is (image, mounts, runtime,
// user, network).
func proof(*policy.Policy) *generate.ProofCall {
	return &generate.ProofCall{Tool: sd.ToolShell, Args: map[string]any{"script": "exit 0"}}
}
