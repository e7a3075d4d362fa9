package allowlist

import (
	"os"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// init's trial asks every command, not only the first, and judges whether each started under
// the policy's limits: a runtime's fatal error at start, a signal, an exec refused fail it,
// naming the command and the fix; a command's own complaint (go has no --version) or its
// deny_args refusing --version do not (trial37 F1). Catches the mutant
// init-proof-start-unjudged (init-proof-first-only: TestStartCheckJudgesEveryCall).
func TestProofJudgesEveryCommandsStart(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	goprog := copyBin(t, exe, t.TempDir(), "goprog")
	p := policy.Default(Scheme.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc", Path: "/usr/bin/wc"}, {Name: "goprog", Path: goprog}, {Name: "grep", Path: "/usr/bin/grep", DenyArgs: []string{"--version"}}}
	call := proof(p)
	calls := append([]*generate.ProofCall{call}, call.Also...)
	if len(calls) != 3 {
		t.Fatalf("%d proof calls for 3 commands", len(calls))
	}
	for i, c := range calls {
		if c.Args["command"] != alsec.Of(p).Commands[i].Name || c.Judge == nil {
			t.Errorf("proof call %d: %v (judged: %t)", i, c, c.Judge != nil)
		}
	}
	gofatal := "fatal error: failed to reserve page summary memory\n\nruntime stack:\nruntime.throw({0xbfc67f?, 0x20000000?})"
	for _, c := range []struct {
		i    int
		r    generate.ProofResult
		want string // "": it started
	}{
		{1, generate.ProofResult{ExitCode: 2, Stderr: gofatal}, `goprog cannot start under this policy's limits (exit 2): fatal error: failed to reserve page summary memory`},
		{1, generate.ProofResult{ExitCode: 2, Stderr: gofatal}, `limits.memory is 256MiB (address space, not RSS: RLIMIT_AS), and runtimes reserve far more than they use: set memory = "1GiB" under [limits]`},
		{0, generate.ProofResult{ExitCode: 139}, "wc was killed by signal 11 as it started"},
		{0, generate.ProofResult{ExitCode: 1, Stderr: "x: fork/exec /usr/lib/x/helper: permission denied"}, "wc cannot start here (exit 1)"},
		{0, generate.ProofResult{ToolError: "refused by rule allowlist.commands[wc].sha256: /usr/bin/wc does not match"}, "failed: refused by rule allowlist.commands[wc].sha256"},
		{1, generate.ProofResult{ExitCode: 2, Stderr: "flag provided but not defined: -version\nUsage: goprog"}, ""},
		{0, generate.ProofResult{Stdout: "wc (GNU coreutils) 9.1"}, ""},
		{2, generate.ProofResult{ToolError: `refused by rule allowlist.commands[grep].deny_args: argument 1 "--version" matches "--version"`}, ""},
	} {
		err := calls[c.i].Judge(c.r)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s %+v: judged %v, want started", calls[c.i], c.r, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s %+v: judged %v, want %q", calls[c.i], c.r, err, c.want)
		}
	}
}
