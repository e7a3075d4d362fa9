package docker

import (
	"errors"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Ready refuses a docker.reuse = "session" policy before any scenario runs. The harness drives
// one stdio session per serve and judges every call as a sandbox of its own: state a call leaves
// for the next (cross-call-leak) and processes that outlive a call (survivors) are breaches
// there, and a session keeps both by design, so every such scenario would read BREACH without
// anything having escaped. Isolation between sessions is proven by the docker package's session
// tests and TestDockerSessionsOverHTTP (two sessions of one serve).
func (adapter) Ready(p *policy.Policy) error {
	if !p.Docker.Sessions() {
		return nil
	}
	return errors.New(`docker.reuse = "session": the harness judges each call as its own sandbox, and a session keeps files, ` +
		`variables and processes across its calls by design (they would read as breaches); run the harness on the same policy ` +
		`with reuse = "call" (its containers are built the same way); isolation between sessions is tested by ` +
		`go test -run 'TestDockerSession' ./serve/docker and -run TestDockerSessionsOverHTTP ./e2e (verify --no-harness checks the rest)`)
}
