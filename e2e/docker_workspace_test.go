package e2e

import (
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A docker policy with a writable workspace: the harness's persistence scenarios (a git hook and
// fsmonitor, a hook in the directory core.hooksPath names, a husky hook, .envrc, CLAUDE.md, CI and
// editor tasks, rc files) are contained by the per-call layer's checked commit, where the plain
// writable bind mount let all five planting scenarios through (and a home's rc files, systemd user
// units and autostart entries).
func TestHarnessDockerWritableWorkspace(t *testing.T) {
	parallel(t)
	needDocker(t)
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = t.TempDir(), true // the harness points it at its own arena
	})
	ids := []string{"git-hooks-argv", "git-hooks-python", "git-hookspath-custom", "git-hookspath-husky", "protected-files-argv",
		"rc-files-python", "rc-files-workspace-python", "systemd-user-unit", "autostart-entry", "cross-call-leak", "disk-fill", "setuid-root", "symlink-planted"}
	rep, code := harnessJSON(t, path, ids)
	if code != 0 || !rep.OK() {
		t.Errorf("exit %d, %s", code, rep.Summary())
	}
	if len(rep.Results) != len(ids) {
		t.Errorf("%d results for %d scenarios", len(rep.Results), len(ids))
	}
	for _, r := range rep.Results {
		if r.Outcome != harness.Contained {
			t.Errorf("%s: %s %s %+v", r.ID, r.Outcome, r.Reason, r.Findings)
		}
	}
}
