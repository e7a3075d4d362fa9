package docker

import (
	"context"
	"fmt"
	"strconv"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The harness drives a docker.reuse = "session" policy over streamable HTTP, every call in an
// MCP session of one serve (internal/harness/sessions.go): a step naming no session gets one of its own
// (its container is its sandbox, ended with the session, as a per-call container ends with its
// call), and the session-* scenarios attack one session from another.
var _ harness.Sessioner = adapter{}

// SessionCap is docker.max_sessions under a session policy (0 under reuse = "call").
func (adapter) SessionCap(p *policy.Policy) (int, string) {
	if !dksec.Of(p).Sessions() {
		return 0, ""
	}
	return dksec.Of(p).SessionCap(), "docker.max_sessions"
}

// Spare is docker.pool: containers started ahead, which Sandboxes lists beside the sessions'.
func (adapter) Spare(p *policy.Policy) int { return dksec.Of(p).Pool }

// Sandboxes lists the running containers labelled with serve's pid, from the engine.
func (adapter) Sandboxes(ctx context.Context, serverPID int) ([]string, error) {
	return running(ctx, serverPID)
}

func running(ctx context.Context, serverPID int) ([]string, error) {
	eng, err := engine.New()
	if err != nil {
		return nil, fmt.Errorf("reach the Docker engine to list the sandboxes: %w", err)
	}
	defer eng.Close()
	cs, err := eng.API.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(
		filters.Arg("label", sd.LabelApp+"=1"), filters.Arg("label", sd.LabelPID+"="+strconv.Itoa(serverPID)))})
	if err != nil {
		return nil, fmt.Errorf("list the containers labelled %s=%d: %w", sd.LabelPID, serverPID, err)
	}
	var out []string
	for _, c := range cs {
		out = append(out, c.ID[:12]+" ("+c.State+")")
	}
	return out, nil
}
