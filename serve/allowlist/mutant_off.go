//go:build !mutant

package allowlist

// mutantBuild is true only in a build with the "mutant" tag.
const mutantBuild = false

// mutated reports whether the named enforcement mechanism is switched off. In a release build
// (no "mutant" tag) it is the constant false: every `if !mutated(...)` folds away and the
// binary carries no switch. See mutant_on.go and mutants/mutants.toml.
func mutated(string) bool { return false }

// helperEnv is the exec helper's whole environment: nothing, so it cannot carry the server's
// secrets.
func helperEnv() []string { return []string{} }
