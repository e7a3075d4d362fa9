package e2b

import (
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

// controls are the negative controls for the detectors that judge the e2b scheme (the others
// report N/A for it; their controls live with the schemes they can see).
func controls() []harness.Control {
	return []harness.Control{
		{Detector: "wall_time", Scenario: "cpu-spin-past-timeout", Kind: "expectation",
			Weakness: "calls held to 0.5s while the policy lets them run 3s",
			Tighten:  func(e *harness.Expect) { e.Timeout, e.Grace = 500*time.Millisecond, 0 }},
		{Detector: "output", Scenario: "output-flood-python", Kind: "expectation",
			Weakness: "streams held to 1KiB while max_output_bytes is 64KiB",
			Tighten:  func(e *harness.Expect) { e.Output = 1 << 10 }},
		{Detector: "responsive", Scenario: "output-flood-python", Kind: "staged",
			Weakness: "the server is stopped (SIGSTOP) before the check, as a wedged server would be",
			Inject:   func(a *harness.Arena) { a.Pause() }},
		{Detector: "survivors", Scenario: "cpu-spin-past-timeout", Kind: "staged",
			Weakness: "a process left running in the workspace, as a sandbox serve failed to kill would leave",
			Inject:   (*harness.Arena).LeaveProcess},
	}
}
