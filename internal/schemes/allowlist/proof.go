package allowlist

import (
	"fmt"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// proof: every allowed command asked for its version (a call that reads and writes nothing,
// through every layer a call gets, under the policy's limits), each judged by whether it started
// (trial37 F1: only the first was asked, and its exit status ignored, so a Go binary that could
// not start under limits.memory passed init).
func proof(p *policy.Policy) *generate.ProofCall {
	cs := alsec.Of(p).Commands
	if len(cs) == 0 {
		return nil
	}
	calls := make([]*generate.ProofCall, len(cs))
	for i, c := range cs {
		calls[i] = &generate.ProofCall{Tool: "run_allowed_command",
			Args:  map[string]any{"command": c.Name, "args": []string{"--version"}},
			Judge: startJudge(p, c)}
	}
	calls[0].Also = calls[1:]
	return calls[0]
}

// startJudge judges a command's --version call: it started unless the call was refused (not by
// its own deny_args, which keep --version from running at all), or it died of a signal, or its
// runtime said a fatal error at start (Go's runtime, V8, the JVM), or an exec of another
// program was refused. A non-zero exit alone is the command's answer (go has no --version: it
// prints its usage and exits 2), not a failure to start.
func startJudge(p *policy.Policy, c policy.Command) func(generate.ProofResult) error {
	return func(r generate.ProofResult) error {
		if r.ToolError != "" {
			if strings.Contains(r.ToolError, "allowlist.commands["+c.Name+"].deny_args") {
				return nil
			}
			return fmt.Errorf("failed: %s", r.ToolError)
		}
		if mutated("init-proof-start-unjudged") {
			return nil
		}
		said := firstLines(r.Stderr, 6)
		switch {
		case sa.AddressSpaceFailure(r.Stderr) || sa.RuntimeFatal(r.Stderr):
			return fmt.Errorf("%s cannot start under this policy's limits (exit %d): %s\nfix: %s", c.Name, r.ExitCode, said, memoryFix(p, c))
		case sa.ExecRefused(r.Stderr):
			return fmt.Errorf("%s cannot start here (exit %d): %s\nfix: %s", c.Name, r.ExitCode, said, sa.ExecNote)
		case r.ExitCode > 128 && r.ExitCode <= 128+64:
			return fmt.Errorf("%s was killed by signal %d as it started: %s\nfix: if it is a runtime that reserves address space, %s", c.Name, r.ExitCode-128, said, memoryFix(p, c))
		}
		return nil
	}
}

// memoryFix says what limits.memory to write for c: what it is known to need, else four times
// the present one.
func memoryFix(p *policy.Policy, c policy.Command) string {
	need, _ := addressSpaceNeed(c)
	if need <= p.Limits.Memory {
		need = 4 * p.Limits.Memory
	}
	return fmt.Sprintf(`limits.memory is %s (address space, not RSS: RLIMIT_AS), and runtimes reserve far more than they use: set memory = "%s" under [limits] in the policy`,
		p.Limits.Memory, need)
}

// firstLines is the first n lines of s, trimmed ("(nothing on stderr)" when empty).
func firstLines(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\n\n"); i > 0 {
		s = s[:i] // a runtime's first paragraph says why; its stack follows
	}
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	if t := strings.TrimSpace(strings.Join(ls, "\n")); t != "" {
		return t
	}
	return "(nothing on stderr)"
}
