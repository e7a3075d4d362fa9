package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify on a docker policy whose docker.runtime the engine lacks (edited by hand to "kata")
// says so once, in a docker runtime host row with serve's own message and fix, and does not run
// the harness: serve stops at start, and every scenario was an ERROR with the same message, 81 of
// them, after host rows that all said ok (trial32 F14). Red with mutant verify-runtime-blocks.
func TestVerifyDockerRuntimeMissing(t *testing.T) {
	needDocker(t)
	path := dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Runtime = "kata" })
	verifyBlocked(t, path,
		"--  docker runtime     docker.runtime: the engine at ",
		` has no runtime "kata" (it has: `,
		`install and register it in daemon.json (crun and runsc: sudo sh scripts/docker-runtimes.sh), or set runtime = "" for the engine's default`,
		"3. Harness not run: serve cannot run a call on this policy here (the docker runtime row")
}

// verifyBlocked runs verify on the policy at path, which a host row blocks: exit 1, the output
// says each of want, and no scenario ran.
func verifyBlocked(t *testing.T, path string, want ...string) {
	t.Helper()
	out, err := exec.Command(binPath, "verify", "--policy", path, "--parallel", "2").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("verify: %v, want exit 1\n%s", err, out)
	}
	s := string(out)
	flat := strings.Join(strings.Fields(s), " ") // host rows are wrapped at 120 columns (trial35 F13)
	for _, w := range want {
		if !strings.Contains(s, w) && !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
			t.Errorf("verify's output lacks %q:\n%s", w, s)
		}
	}
	if n := strings.Count(s, "\nERROR "); n > 0 {
		t.Errorf("verify ran the harness: %d scenarios failed the same way:\n%.3000s", n, s)
	}
}
