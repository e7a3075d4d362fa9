package generate

import (
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Summary is a policy in a few lines, for init's preview: one line per setting, the commands on
// one line. Diffing two summaries shows what a re-run changes in words, not 90 lines of TOML.
func Summary(p *policy.Policy) []string {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	l := p.Limits
	out := []string{
		fmt.Sprintf("scheme %s, server name %q", p.Scheme, p.Name),
		fmt.Sprintf("limits: %s per call, output %s per stream, memory %s, %d processes, %d calls at once",
			l.Timeout.String(), l.MaxOutputBytes.String(), l.Memory.String(), l.Pids, l.MaxConcurrent),
	}
	switch p.Scheme {
	case policy.SchemeAllowlist:
		a := p.Allowlist
		names := make([]string, len(a.Commands))
		for i, c := range a.Commands {
			names[i] = c.Name
		}
		out = append(out,
			"workspace "+a.Workspace,
			fmt.Sprintf("commands (%d, each pinned by sha256): %s", len(names), strings.Join(names, ", ")),
			"network "+a.Net().String())
	case policy.SchemeDocker:
		d := p.Docker
		out = append(out, fmt.Sprintf("image %s, network %s, read-only root %s, user %s", d.Image, d.Net().String(), onOff(d.ReadOnly), d.User))
		if d.Workspace != "" {
			rw := "read-only"
			if d.WorkspaceWritable {
				rw = "writable"
			}
			out = append(out, fmt.Sprintf("workspace %s at /workspace (%s)", d.Workspace, rw))
		}
		out = append(out, fmt.Sprintf("pre-started containers: %d", d.Pool))
		if d.Runtime != "" {
			out = append(out, "runtime "+d.Runtime)
		}
	case policy.SchemeE2B:
		e := p.E2B
		out = append(out, fmt.Sprintf("template %s, API key from $%s (never written)", e.Template, e.APIKeyEnv),
			fmt.Sprintf("reuse %s, sandbox timeout %s, internet %s", e.Reuse, e.SandboxTimeout.String(), onOff(e.AllowInternet)))
	}
	return out
}
