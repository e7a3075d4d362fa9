package e2e

import (
	"os/exec"
	"strings"
	"testing"
)

// harness --controls -s ID runs only that scenario's controls (it ran every control before);
// an id no control uses is refused, naming those that exist.
func TestControlsSelectedByScenario(t *testing.T) {
	out, stderr, code := runCmd(t, exec.Command(binPath, "harness", "--controls", "-s", "fork-bomb-python"))
	if code != 0 || !strings.Contains(out, "all 1 controls fired") || strings.Count(out, "fork-bomb-python") != 1 {
		t.Errorf("exit %d:\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = runCmd(t, exec.Command(binPath, "harness", "--controls", "-s", "no-such-scenario"))
	if code == 0 || !strings.Contains(stderr, `no negative control runs the scenario "no-such-scenario"`) || !strings.Contains(stderr, "fork-bomb-python") {
		t.Errorf("exit %d:\n%s\n%s", code, out, stderr)
	}
}
