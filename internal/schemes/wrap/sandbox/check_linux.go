package sandbox

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/mcpsandbox/mcpsandbox/executor"
	allowlist "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// CheckExecutor is what `serve --check` (and so explain and verify) measure for a wrap policy:
// the allowlist executor the server would start under, probed with this binary standing in for
// the server. It has no tools: serving a wrap policy is its relay (Run).
func CheckExecutor(p *policy.Policy, log *slog.Logger) (executor.Executor, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("find the mcpsandbox binary: %w", err)
	}
	if self, err = filepath.EvalSymlinks(self); err != nil {
		return nil, err
	}
	home, err := os.MkdirTemp("", "mcpsandbox-wrap-check-")
	if err != nil {
		return nil, err
	}
	ex, err := newExecutor(p, home, self, Options{Logger: log}, false)
	if err != nil {
		os.RemoveAll(home)
		return nil, err
	}
	return &checkExecutor{ex: ex, home: home}, nil
}

type checkExecutor struct {
	ex   *allowlist.Executor
	home string
}

func (c *checkExecutor) Tools() []executor.Tool   { return nil }
func (c *checkExecutor) Layers() []executor.Layer { return c.ex.Layers() }
func (c *checkExecutor) Ready() error             { return c.ex.Ready() }
func (c *checkExecutor) Close() error             { err := c.ex.Close(); os.RemoveAll(c.home); return err }
