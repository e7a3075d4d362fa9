//go:build testhooks

package testhooks

import (
	"os"
	"strconv"
)

// Build is true only in a build with the "testhooks" tag.
const Build = true

// StandInsVar is the egress stand-in hook (internal/serve/egress reads it; the harness and the tests set
// it): "name=ip[:port],...". It exists only in test builds: a release binary neither reads nor
// names it, and the release-binary test (mutants/testhooks_test.go) checks that.
const StandInsVar = "MCPSANDBOX_EGRESS_STANDINS"

// StandIns is the hook's value and whether it is set.
func StandIns() (string, bool) { return os.LookupEnv(StandInsVar) }

// StandInsEnv is the environment entry handing serve the stand-ins v.
func StandInsEnv(v string) []string { return []string{StandInsVar + "=" + v} }

// StartGarbage is the hook's value in bytes (0: unset or not a number).
func StartGarbage() int {
	n, _ := strconv.Atoi(os.Getenv(StartGarbageVar))
	return n
}
