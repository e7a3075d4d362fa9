//go:build !mutant

package docker

// mutated reports whether the named mechanism is switched off: in a release build (no "mutant"
// tag) the constant false, so every switch folds away. See mutants/mutants.toml.
func mutated(string) bool { return false }

// mutantBuild is true only in a build with the "mutant" tag.
const mutantBuild = false
