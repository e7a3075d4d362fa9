package e2e

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify on a docker policy whose image is not in the engine and cannot be pulled (a policy
// edited by hand to an image this host lacks, offline) says so once, in a host row with the fix,
// and does not run the harness: serve stops at start, and every scenario was an ERROR with the
// same message, 80 of them. Red with mutant verify-image-blocks.
func TestVerifyDockerImageMissing(t *testing.T) {
	needDocker(t)
	const img = "127.0.0.1:1/mcpsandbox-absent:none" // nothing listens there: the pull fails at once
	path := dockerPolicy(t, func(p *policy.Policy) { dksec.Of(p).Image = img })
	out, err := exec.Command(binPath, "verify", "--policy", path, "--parallel", "2").CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("verify: %v, want exit 1\n%s", err, out)
	}
	s := string(out)
	for _, want := range []string{
		"docker image       " + img + " is not in the engine, and pulling it failed",
		"pull it (docker pull " + img + ")",
		"3. Harness not run: serve cannot run a call on this policy here (the docker image row",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("verify's output lacks %q:\n%s", want, s)
		}
	}
	if n := strings.Count(s, "\nERROR "); n > 0 {
		t.Errorf("verify ran the harness: %d scenarios failed the same way:\n%.3000s", n, s)
	}
}
