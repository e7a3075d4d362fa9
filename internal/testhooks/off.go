//go:build !testhooks

package testhooks

// Build is true only in a build with the "testhooks" tag.
const Build = false

// StandIns is the egress stand-in hook's value and whether it is set: never, in a release build.
func StandIns() (string, bool) { return "", false }

// StandInsEnv is the environment entry handing serve the stand-ins v: none in a release build.
func StandInsEnv(v string) []string { return nil }

// StartGarbage is 0 in a release build: the start allocates only what it needs.
func StartGarbage() int { return 0 }
