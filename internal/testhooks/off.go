//go:build !testhooks

// Package testhooks is what only a test build carries: the hooks the harness and the tests use
// to point serve at stand-ins on this host. A build with the "testhooks" tag (go build -tags
// testhooks ./cmd/mcpsandbox; make test builds and tests with it) has them; in a release build
// every function here is a constant or a no-op, so the binary neither reads nor names a hook
// variable and links no fake server. See the README ("Proving it").
package testhooks

// Build is true only in a build with the "testhooks" tag.
const Build = false

// NeedsTestBuild is why something a test build does is N/A in this one.
const NeedsTestBuild = "needs a test build (go build -tags testhooks): the stand-in hosts re-open loopback, which a release binary never does"

// StandIns is the egress stand-in hook's value and whether it is set: never, in a release build.
func StandIns() (string, bool) { return "", false }

// StandInsEnv is the environment entry handing serve the stand-ins v: none in a release build.
func StandInsEnv(v string) []string { return nil }
