package wrap

import (
	"strings"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// threats is explain's table for a wrapped server: what a hostile MCP server would try, and the
// allowlist layers (as `serve --check` measures them for a wrap policy) that stop it. The
// harness's wrap scenarios (owned with its adapter) attach to these threats.
var threats = []verify.ThreatRule{
	{Threat: "read secrets in HOME and elsewhere on the host (keys, tokens, browser profiles)", Layers: []string{sa.LayerLandlockFS},
		Gap: func(p *policy.Policy) string {
			if len(wrapsec.Of(p).Read) > 0 {
				return "wrap.read opens " + strings.Join(wrapsec.Of(p).Read, ", ")
			}
			return ""
		}},
	{Threat: "write rc files, git hooks or anything the host runs later", Layers: []string{sa.LayerLandlockFS},
		Gap: func(p *policy.Policy) string {
			if len(wrapsec.Of(p).Write) > 0 {
				return "wrap.write opens " + strings.Join(wrapsec.Of(p).Write, ", ") + " to writes"
			}
			return ""
		}},
	{Threat: "read the client's environment (API keys it holds)", Layers: []string{sa.LayerCleanEnv},
		Gap: func(p *policy.Policy) string {
			if len(wrapsec.Of(p).Env) > 0 {
				return "wrap.env passes " + strings.Join(wrapsec.Of(p).Env, ", ")
			}
			return ""
		}},
	{Threat: "phone home (TCP, UDP, DNS, cloud metadata, the internet)", Layers: []string{sa.LayerNetNS, sa.LayerSeccomp},
		Gap: func(p *policy.Policy) string {
			switch n := wrapsec.Of(p).Net(); n.Mode {
			case policy.NetAll:
				return "wrap.network = true: every host"
			case policy.NetHosts:
				return "wrap.network lists hosts the server may reach (through the egress proxy, each decision logged): " + n.String()
			}
			return ""
		}},
	{Threat: "leave a daemon or a process behind after the client goes", Layers: []string{sa.LayerPIDNS}},
	{Threat: "fork-bomb or exhaust memory and disk", Layers: []string{sa.LayerProcessLimit, sa.LayerRlimits, sa.LayerPrivateTmp},
		Caveat: "limits.memory bounds each process's address space, not the tree's total"},
	{Threat: "escape the sandbox through the kernel (ptrace, mount, namespaces, bpf, io_uring)", Layers: []string{sa.LayerSeccomp, sa.LayerNoNewPrivs}},
	{Threat: "call a tool the policy denies, or send oversized or malformed messages", Server: true,
		By: "the relay: wrap.tools allow/deny and max_argument_bytes, a 4 MiB frame limit, every tools/call audited"},
}
