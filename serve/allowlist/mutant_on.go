//go:build mutant

package allowlist

import (
	"fmt"
	"os"
	"strings"
)

// MutantEnv names the mechanisms a mutant build switches off (comma-separated). It exists only
// in builds with the "mutant" tag (make mutants); a release binary neither reads nor names it.
const MutantEnv = "MCPSANDBOX_MUTANT"

// mutantMarker is a string only a mutant build contains: the release-binary test looks for it.
const mutantMarker = "mcpsandbox-mutant-build: mechanisms switched off for testing"

var mutantSet = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Split(os.Getenv(MutantEnv), ",") {
		if n = strings.TrimSpace(n); n != "" {
			m[n] = true
		}
	}
	if len(m) > 0 && (len(os.Args) < 2 || os.Args[1] != HelperArg) { // a helper's stderr is the command's
		fmt.Fprintf(os.Stderr, "%s: %s=%s\n", mutantMarker, MutantEnv, os.Getenv(MutantEnv))
	}
	return m
}()

// mutantBuild is true only in a build with the "mutant" tag.
const mutantBuild = true

// mutated reports whether the named mechanism is switched off in this mutant run.
func mutated(name string) bool { return mutantSet[name] }

// helperEnv passes the mutant selection on to the exec helper (whose environment is otherwise
// empty); the command itself never sees it (its environment is the spec's).
func helperEnv() []string {
	if v := os.Getenv(MutantEnv); v != "" {
		return []string{MutantEnv + "=" + v}
	}
	return []string{}
}
