//go:build mutant

package e2b

import (
	"os"
	"strings"
)

// mutantSet is MCPSANDBOX_MUTANT's list: mechanisms a mutant build switches off (make mutants).
var mutantSet = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Split(os.Getenv("MCPSANDBOX_MUTANT"), ",") {
		if n = strings.TrimSpace(n); n != "" {
			m[n] = true
		}
	}
	return m
}()

// mutated reports whether the named mechanism is switched off in this mutant run.
func mutated(name string) bool { return mutantSet[name] }

// mutantBuild is true only in a build with the "mutant" tag.
const mutantBuild = true
