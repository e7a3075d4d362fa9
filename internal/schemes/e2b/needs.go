package e2b

import (
	"context"
	"fmt"
	"os"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// needs: the API key's variable set here (the client must start serve with it too).
func needs(_ context.Context, a *generate.Answers, _ scheme.Prompt) error {
	key := Own(a).APIKeyEnv
	if key == "" {
		key = e2bsec.Of(policy.Default(e2bsec.Name)).APIKeyEnv
	}
	if os.Getenv(key) == "" {
		// init's own environment: exported in another terminal it never reaches this init
		return &scheme.RestartError{Err: fmt.Errorf("the e2b scheme needs your E2B API key in $%s, here and in the environment your MCP client starts servers with: export %s=… (the key from e2b.dev/dashboard) in the shell you run init from, then run init again. Nothing was written", key, key)}
	}
	return nil
}
