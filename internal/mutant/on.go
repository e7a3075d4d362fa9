//go:build mutant

package mutant

import (
	"fmt"
	"io"
	"os"
	"strings"
)

// Env names the mechanisms a mutant build switches off (comma-separated). It exists only in
// builds with the "mutant" tag (make mutants); a release binary neither reads nor names it.
const Env = "MCPSANDBOX_MUTANT"

// marker is a string only a mutant build contains: the release-binary test looks for it.
const marker = "mcpsandbox-mutant-build: mechanisms switched off for testing"

// Build is true only in a build with the "mutant" tag.
const Build = true

var set = func() map[string]bool {
	m := map[string]bool{}
	for _, n := range strings.Split(os.Getenv(Env), ",") {
		if n = strings.TrimSpace(n); n != "" {
			m[n] = true
		}
	}
	return m
}()

// On reports whether the named mechanism is switched off in this mutant run.
func On(name string) bool { return set[name] }

// HelperEnv passes the mutant selection on to the exec helper (whose environment is otherwise
// empty); the command itself never sees it (its environment is the spec's).
func HelperEnv() []string {
	if v := os.Getenv(Env); v != "" {
		return []string{Env + "=" + v}
	}
	return []string{}
}

// Announce says on w that this is a mutant build and what is switched off. Called by the
// mcpsandbox command, never by the exec helper (whose stderr is the command's).
func Announce(w io.Writer) {
	if len(set) > 0 {
		fmt.Fprintf(w, "%s: %s=%s\n", marker, Env, os.Getenv(Env))
	}
}
