package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

// TestDockerKernelSurface: the kernel-surface scenario's docker step (a static probe run from a
// memfd: the test image has no ctypes) is judged by the syscalls detector, and serve's seccomp
// profile refuses every probed call with EPERM. Under the engine's default profile (mutant
// docker-seccomp-own) io_uring_setup reaches the host kernel: BREACH.
func TestDockerKernelSurface(t *testing.T) {
	needDocker(t)
	path := dockerPolicy(t, nil)
	out, stderr, code := runBin(t, "harness", "--policy", path, "--scheme", "docker", "-s", "kernel-surface", "--json", "--max-timeout", "8s")
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
	}
	if len(rep.Results) != 1 {
		t.Fatalf("%d results: %s", len(rep.Results), out)
	}
	r := rep.Results[0]
	judged := false
	for _, f := range r.Findings {
		if f.Detector == "syscalls" {
			judged = !f.Breach && strings.Contains(f.Detail, "io_uring_setup") && strings.Contains(f.Detail, "refused with EPERM")
		}
	}
	if code != 0 || r.Outcome != harness.Contained || !judged {
		t.Errorf("kernel-surface under docker: exit %d, %s (%s) %+v", code, r.Outcome, r.Reason, r.Findings)
	}
}
