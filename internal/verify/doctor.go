package verify

import (
	"context"
	"net"
	"net/http"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/egress"
)

// Check is one host fact, with what it means for the schemes.
type Check struct {
	Name   string `json:"name"`
	OK     bool   `json:"ok"`
	Value  string `json:"value"`
	Advice string `json:"advice,omitempty"`
	// Blocks: without it serve cannot run a call on the policy here (its docker image is missing
	// and cannot be pulled), so verify does not run the harness, whose every scenario would fail
	// the same way, and says why instead.
	Blocks bool `json:"blocks,omitempty"`
}

// Doctor is the host's report: each scheme's own checks of what it can rely on here (its
// Host rows, given by the registry), then what every scheme shares.
func Doctor(perScheme ...[]Check) []Check {
	var cs []Check
	for _, c := range perScheme {
		cs = append(cs, c...)
	}
	if w := egress.StandInsWarning(); w != "" {
		// A test hook in this environment changes what a network host list reaches (test builds
		// only: a release build has none, and StandInsWarning is "").
		cs = append(cs, Check{Name: "egress test hook", Value: w, Advice: "unset the variable: only the harness and the tests of a test build set it"})
	}
	return cs
}

// DockerClient is an HTTP client that talks to an engine's unix socket at sock (tests give it a
// stand-in engine; the product uses engine.New, which honours DOCKER_HOST, TLS and contexts).
func DockerClient(sock string, timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
}
