// Package sandbox is the wrap scheme's relay: it runs somebody else's stdio MCP server under the allowlist scheme's kernel layers
// (internal/schemes/allowlist/sandbox's exec helper: namespaces, Landlock, seccomp, rlimits, a clean environment,
// network none or by name through the egress proxy) and relays its JSON-RPC both ways, bounded,
// with every tools/call audited and the policy's tool rules applied (`mcpsandbox wrap`).
package sandbox

import (
	"fmt"
	"io"
	"log/slog"
	"slices"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// LayerWrapWrite is the row `serve --check` gives wrap.write: the directories the wrapped
// server writes on the host directly.
const LayerWrapWrite = "wrap.write"

// LayerIDs are the rows `serve --check` reports for a wrap policy: the allowlist scheme's but a
// call's own (a pinned binary, protected paths, the transactional workspace), and wrap.write's.
var LayerIDs = append(slices.DeleteFunc(slices.Clone(sa.LayerIDs), func(id string) bool {
	return id == sa.LayerPinnedExec || id == sa.LayerProtectedRO || id == sa.LayerWorkspace
}), LayerWrapWrite)

// Options are what Run gets from the command line.
type Options struct {
	Command        []string // from `wrap -- CMD ARGS…`; nil: [wrap].command
	ExplainDenials bool     // one stderr line per refusal and denied host
	Stdin          io.Reader
	Stdout         io.Writer // the MCP channel: nothing else is written there
	Stderr         io.Writer
	Logger         *slog.Logger
	HelperPath     string // the mcpsandbox binary to re-exec as the exec helper; "" = this one
}

// CommandOf is the command to wrap: the command line's when the policy names none, else the
// policy's, which the command line may only repeat.
func CommandOf(p *policy.Policy, cli []string) ([]string, error) {
	pol := wrapsec.Of(p).Command
	switch {
	case len(pol) == 0 && len(cli) == 0:
		return nil, fmt.Errorf("no command to wrap: give it after `--` (mcpsandbox wrap --policy FILE -- npx -y SERVER) or set [wrap].command in the policy")
	case len(pol) == 0:
		return cli, nil
	case len(cli) == 0 || slices.Equal(pol, cli):
		return pol, nil
	}
	return nil, fmt.Errorf("the command line gives %q but the policy's [wrap].command is %q: they must be equal (or empty the policy's command)", cli, pol)
}
