//go:build !linux

package sandbox

import (
	"errors"
	"log/slog"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Unavailable says why the scheme cannot serve here: its layers are Linux kernel features.
const Unavailable = "the allowlist scheme confines commands with Linux kernel layers (Landlock, seccomp, " +
	"PID and network namespaces, rlimits) that this OS does not have; use the docker scheme (Docker Desktop) " +
	"or the e2b scheme here, or run serve on a Linux host"

// Options configure New.
type Options struct {
	Logger     *slog.Logger
	DeferProbe bool // as on Linux; there is no probe here
}

// New refuses: see Unavailable.
func New(*policy.Policy, Options) (executor.Executor, error) { return nil, errors.New(Unavailable) }

// CheckOwnership is the Linux audit of who can replace a pinned binary; elsewhere there is
// nothing to serve, so nothing to check.
func CheckOwnership(string) error { return nil }

// ReadPathRisk is the Linux audit of who can put something at a read path; elsewhere there is
// nothing to serve, so nothing to check.
func ReadPathRisk(string) string { return "" }

// ReadPathRiskFix is what to do about a ReadPathRisk.
const ReadPathRiskFix = ""
