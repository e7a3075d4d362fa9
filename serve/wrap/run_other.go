//go:build !linux

package wrap

import (
	"context"
	"errors"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Run: wrap needs the allowlist scheme's Linux layers.
func Run(ctx context.Context, p *policy.Policy, o Options) error {
	return errors.New("mcpsandbox wrap runs only on Linux (it uses the allowlist scheme's kernel layers: namespaces, Landlock, seccomp)")
}
