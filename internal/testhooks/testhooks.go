// Package testhooks is what only a test build carries: the hooks the harness and the tests use
// to point serve at stand-ins on this host. A build with the "testhooks" tag (go build -tags
// testhooks ./cmd/mcpsandbox; make test builds and tests with it) has them; in a release build
// every function here is a constant or a no-op, so the binary neither reads nor names a hook
// variable and links no fake server. See the README ("Proving it").
package testhooks

// NeedsTestBuild is why something only a test build can do is N/A in a release build: the
// harness's stand-in scenarios.
const NeedsTestBuild = "needs a test build (go build -tags testhooks): the stand-in hosts re-open loopback, which a release binary never does"

// StartGarbageVar makes serve allocate this many bytes of garbage early in its start, before its
// first answers, as a large policy's start does: the e2e test of serve.QuietStart needs a start
// that passes the runtime's first collection goal (4 MB), which the built-in policy's no longer
// does. Only a test build reads it (StartGarbage); a release binary does not name it.
const StartGarbageVar = "MCPSANDBOX_TEST_START_GARBAGE"
