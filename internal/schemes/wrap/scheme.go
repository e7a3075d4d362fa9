// Package wrap is the wrap scheme's entry in the registry: somebody else's stdio MCP server
// under the allowlist scheme's kernel layers, its JSON-RPC relayed, bounded and audited (the
// runtime is internal/schemes/wrap/sandbox). It has no tools of its own, so no executor: serve and `mcpsandbox
// wrap` run its Relay.
package wrap

import (
	"context"
	"strconv"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	sw "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Scheme is the registry entry.
var Scheme = &scheme.Scheme{
	Name:    wrapsec.Name,
	Summary: "another stdio MCP server (npx, uvx, a binary) under the allowlist scheme's layers, its traffic relayed and audited",
	// Executor is only what `serve --check`, explain and verify measure (the layers the server
	// gets); serving a wrap policy is its Relay.
	Executor: func(p *policy.Policy, o scheme.ExecOptions) (executor.Executor, error) {
		return sw.CheckExecutor(p, o.Logger)
	},
	Relay:   relay,
	Audit:   verify.Auditor{Rules: Rules, Check: audit},
	Threats: threats,
	Layers:  sw.LayerIDs,
	Bounds:  bounds,
	Bench:   benchRows,
}

func relay(ctx context.Context, p *policy.Policy, o scheme.RelayOptions) error {
	return sw.Run(ctx, p, sw.Options{Command: o.Command, ExplainDenials: o.ExplainDenials,
		Stdin: o.Stdin, Stdout: o.Stdout, Stderr: o.Stderr, Logger: o.Logger})
}

// bounds: the relay's own, and the egress proxy's with a host list.
func bounds(p *policy.Policy) []verify.Bound {
	bs := []verify.Bound{
		{Boundary: "wrap", What: "one JSON-RPC message either way", Value: strconv.Itoa(sw.MaxFrame>>20) + "MiB", Past: "never held whole: dropped, the request answered with an error naming wrap.max_frame; the relay goes on"},
		{Boundary: "wrap", What: "client requests awaiting the server's answer", Value: strconv.Itoa(sw.MaxInflight), Past: "refused with an error naming wrap.max_inflight; the server never sees it"},
		{Boundary: "wrap", What: "a tools/call's arguments", Value: wrapsec.Of(p).Tools.MaxArgumentBytes.String(), Key: "wrap.tools.max_argument_bytes", Past: "refused with an error naming the key, audited refused"},
		{Boundary: "wrap", What: "a tools/call's wait for its answer", Value: p.Limits.Timeout.String(), Key: "limits.timeout", Past: "answered with an error naming the key, the server told to cancel, a late answer dropped"},
		{Boundary: "wrap", What: "what the server keeps in its private HOME (a tmpfs in its mount namespace, at most 65536 files)", Value: p.Limits.WorkspaceQuota.String(), Key: "limits.workspace_quota", Past: "the server's writes there fail with ENOSPC; the host's disk never holds them, and they are gone with the server"},
	}
	if wrapsec.Of(p).Net().Mode == policy.NetHosts {
		bs = append(bs, verify.Bound{Boundary: "egress", What: "proxy connections the server holds at once", Value: strconv.Itoa(p.Limits.EgressConnections),
			Key: "limits.egress_connections", Past: "more wait in the listener's backlog until one ends; other sandboxes are not affected"})
	}
	return bs
}
