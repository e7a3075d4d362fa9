//go:build !linux

package sandbox

import "github.com/mcpsandbox/mcpsandbox/policy"

// InterpreterBehind is Linux-only (the scheme is); elsewhere it finds nothing.
func InterpreterBehind(policy.Command) string { return "" }

// CheckWorkspace is Linux-only (the scheme is); elsewhere it accepts.
func CheckWorkspace(string) error { return nil }
