package wrap

import (
	"fmt"
	"os"
	"path/filepath"
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
		Gap: readGap, Opening: func(p *policy.Policy, _ func(string) bool) string {
			if r := wrapsec.Of(p).Read; len(r) > 0 {
				return "wrap.read opens only " + strings.Join(r, ", ") + " (what is there is the server's to read; the rest of HOME and the host stays closed)"
			}
			return ""
		}},
	{Threat: "write rc files, git hooks or anything the host runs later", Layers: []string{sa.LayerLandlockFS},
		Gap: writeGap, Opening: func(p *policy.Policy, _ func(string) bool) string {
			if w := wrapsec.Of(p).Write; len(w) > 0 {
				return "wrap.write opens only " + strings.Join(w, ", ") + " to writes (no repository or tool configuration there, as verify judges it; " +
					"what the server leaves there is its own content: do not run it); the rest of the host stays read-only"
			}
			return ""
		}},
	{Threat: "read the client's environment (API keys it holds)", Layers: []string{sa.LayerCleanEnv},
		Opening: func(p *policy.Policy, _ func(string) bool) string {
			if e := wrapsec.Of(p).Env; len(e) > 0 {
				return "wrap.env passes " + strings.Join(e, ", ") + " (their values are the server's; the rest of the client's environment is not passed)"
			}
			return ""
		}},
	{Threat: "phone home (TCP, UDP, DNS, cloud metadata, the internet)", Layers: []string{sa.LayerNetNS, sa.LayerSeccomp},
		Gap: func(p *policy.Policy) string {
			if wrapsec.Of(p).Net().Mode == policy.NetAll {
				return "wrap.network = true: every host"
			}
			return ""
		},
		Opening: func(p *policy.Policy, _ func(string) bool) string {
			if n := wrapsec.Of(p).Net(); n.Mode == policy.NetHosts {
				return "wrap.network lists the only hosts the server may reach (through the egress proxy, each decision logged): " + n.String()
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

// readGap: a wrap.read entry that opens a home, a home's dot directory or /etc (what verify's
// MS504 names) leaves the threat open; a directory of data only opens itself (Opening).
func readGap(p *policy.Policy) string {
	home, _ := os.UserHomeDir()
	var open []string
	for _, r := range wrapsec.Of(p).Read {
		if s := sa.ExposedSecrets(r, home); s != "" && filepath.IsAbs(r) {
			open = append(open, fmt.Sprintf("%s (it lets the server read %s)", filepath.Clean(r), s))
		}
	}
	if len(open) == 0 {
		return ""
	}
	return "wrap.read opens " + strings.Join(open, ", ")
}

// writeGap: a wrap.write entry that is, or lies in, a home, a system directory or a repository,
// or holds tool or agent configuration (verify's MS501 and MS502) leaves the threat open there.
func writeGap(p *policy.Policy) string {
	var open []string
	for _, d := range wrapsec.Of(p).Write {
		if why := writeRisk(d); why != "" {
			open = append(open, d+" ("+why+")")
		}
	}
	if len(open) == 0 {
		return ""
	}
	return "wrap.write opens " + strings.Join(open, ", ") + " to writes: the server can write what the host and its tools run from there"
}

// writeRisk is what makes a wrap.write directory, as written or as it resolves, a place the
// host or its tools run from: what verify's MS501 and MS502 judge ("" = a directory of data).
func writeRisk(d string) string {
	if !filepath.IsAbs(d) {
		return "" // the policy's own check refuses it
	}
	resolved := filepath.Clean(d)
	if r, err := filepath.EvalSymlinks(d); err == nil {
		resolved = r
	}
	if err := policy.CheckWorkspacePath(d, resolved, policy.WorkspaceUse{Key: "wrap.write", Harm: "the server could write what the host runs"}); err != nil {
		return err.Error()
	}
	if why := inHome(filepath.Clean(d), resolved); why != "" {
		return "it " + why
	}
	if why := unjudged(resolved); why != "" {
		return "it " + why
	}
	return ""
}
