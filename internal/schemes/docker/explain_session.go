package docker

import (
	"fmt"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// stateGap is what carries state from one call to the next under the policy: a writable
// workspace (workspaceGap), and with docker.reuse = "session" the session's own container.
func stateGap(p *policy.Policy) string {
	gap := workspaceGap(p)
	if dksec.Of(p).Sessions() {
		s := fmt.Sprintf(`reuse = "session": the calls of one MCP session share its container (Python variables, files in /tmp and processes persist within the session, by design); `+
			"sessions never share one: a container per session, removed when the session ends or after docker.session_idle = %s, at most docker.max_sessions = %d at once",
			policy.Duration{Duration: dksec.Of(p).Idle()}, dksec.Of(p).SessionCap())
		if gap != "" {
			return s + "; " + gap
		}
		return s
	}
	return gap
}
