package generate

import (
	"fmt"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Summary is a policy in a few lines, for init's preview: one line per setting, the commands on
// one line. Diffing two summaries shows what a re-run changes in words, not 90 lines of TOML.
func Summary(p *policy.Policy) []string {
	l := p.Limits
	out := []string{
		fmt.Sprintf("scheme %s, server name %q", p.Scheme, p.Name),
		fmt.Sprintf("limits: %s per call, output %s per stream, memory %s, %d processes, %d calls at once",
			l.Timeout.String(), l.MaxOutputBytes.String(), l.Memory.String(), l.Pids, l.MaxConcurrent),
	}
	if sec := p.Section(); sec != nil {
		out = append(out, sec.Summary()...)
	}
	return out
}
