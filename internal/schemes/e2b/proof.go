package e2b

import (
	"os"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// proof: `true` in a sandbox (the key, the API and the sandbox all answer).
func proof(*policy.Policy) *generate.ProofCall {
	return &generate.ProofCall{Tool: "run_command", Args: map[string]any{"command": "true"}}
}

// serverEnv: the key's variable, and the endpoint variables serve honours when they are set
// here (a client such as Codex or Gemini CLI would not pass them by itself).
func serverEnv(p *policy.Policy) []string {
	names := []string{e2bsec.Of(p).APIKeyEnv}
	for _, n := range []string{"E2B_API_URL", "E2B_SANDBOX_URL", "E2B_DOMAIN"} {
		if n == "E2B_API_URL" && e2bsec.Of(p).APIURL != "" {
			continue
		}
		if os.Getenv(n) != "" {
			names = append(names, n)
		}
	}
	return names
}
