//go:build !mutant

// Package mutant is the switch board of `make mutants`: in a build with the "mutant" tag,
// MCPSANDBOX_MUTANT names enforcement mechanisms to switch off, so the runner can show that a
// test turns red without each one. In a release build every function here is a constant and
// every `if !mutant.On(...)` folds away: the binary carries no switch. See mutants/mutants.toml.
package mutant

import "io"

// Build is true only in a build with the "mutant" tag.
const Build = false

// On reports whether the named mechanism is switched off: always false in a release build.
func On(string) bool { return false }

// HelperEnv is the exec helper's whole environment: nothing, so it cannot carry serve's secrets.
func HelperEnv() []string { return []string{} }

// Announce says on w that this is a mutant build: nothing in a release build.
func Announce(io.Writer) {}
