//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/executor"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Run: wrap needs the allowlist scheme's Linux layers.
func Run(ctx context.Context, p *policy.Policy, o Options) error {
	return errors.New("mcpsandbox wrap runs only on Linux (it uses the allowlist scheme's kernel layers: namespaces, Landlock, seccomp)")
}

// CheckExecutor: wrap needs the allowlist scheme's Linux layers.
func CheckExecutor(p *policy.Policy, log *slog.Logger) (executor.Executor, error) {
	return nil, errors.New("mcpsandbox wrap runs only on Linux")
}
