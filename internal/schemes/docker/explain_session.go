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
	if n := dksec.Of(p).Net(); n.Mode == policy.NetNamed && !mutated("atk19b-docker-network-peers") {
		// Measured (TestNamedNetworkJoinsSessions): session B's program read what a process
		// session A's call left running served on the default bridge.
		peers := fmt.Sprintf("docker.network = %s: the containers of concurrent calls and of other sessions on that network can connect to each other "+
			"(the engine's traffic between containers), so one call's or session's program can hand data to another's", n)
		if gap != "" {
			gap += "; "
		}
		gap += peers
	}
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
