package policy_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial36 F9: hand-written policies' problems name their own fix, once, with the element's
// index and a path that works: timeout = 30 gets `write "30s"` (not also the generic TOML fix);
// deny_args = "-c" in the second command is allowlist.commands[1].deny_args; a sha256 missing
// beside path = "wc" is pinned by an absolute path (sha256sum wc fails); a workspace written from
// ~ gets its expansion. Red with the generic wording (mutant policy-fix-generic).
func TestHandWrittenPolicyWording(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	problems := func(src string) map[string]policy.Problem {
		t.Helper()
		_, err := policy.Parse("p.toml", []byte(src))
		var pe *policy.Error
		if !errors.As(err, &pe) {
			t.Fatalf("err = %v, want *policy.Error", err)
		}
		m := map[string]policy.Problem{}
		for _, p := range pe.Problems {
			m[p.Key] = p
		}
		return m
	}
	ps := problems(strings.Replace(validAllowlist, `timeout = "30s"`, `timeout = 30`, 1))
	if p := ps["limits.timeout"]; p.Fix != `write "30s"` || strings.Contains(p.Msg, "for 30 seconds") {
		t.Errorf("timeout = 30: %q (fix: %q)", p.Msg, p.Fix)
	}
	ps = problems(validAllowlist + "\n[[allowlist.commands]]\nname = \"python3\"\npath = \"/usr/bin/python3\"\nsha256 = \"" + strings.Repeat("0", 64) + "\"\ndeny_args = \"-c\"\n")
	if _, ok := ps["allowlist.commands[1].deny_args"]; !ok {
		t.Errorf("deny_args as a string in the second command: keys %v", keys(ps))
	}
	ps = problems(validAllowlist + "\n[[allowlist.commands]]\nname = \"wc2\"\npath = \"wc\"\n")
	if p := ps["allowlist.commands[1].sha256"]; !strings.HasPrefix(p.Fix, "pin it: sha256sum /") {
		t.Errorf("no sha256 beside path = \"wc\": fix %q", p.Fix)
	}
	ps = problems(strings.Replace(validAllowlist, `workspace = "/srv/ws"`, `workspace = "~/ai-workspace"`, 1))
	if p := ps["allowlist.workspace"]; !strings.Contains(p.Fix, `write "`+filepath.Join(home, "ai-workspace")+`"`) {
		t.Errorf("workspace = ~/ai-workspace: fix %q", p.Fix)
	}
	// wrap.write's directory is no workspace, and its finding has a fix of its own
	err := policy.CheckWorkspacePathWith(home, home, policy.WorkspaceUse{Key: "wrap.write[0]", Harm: "h", Noun: "directory", OwnFix: true}, policy.Homes{Homes: []string{home}})
	if err == nil || !strings.HasPrefix(err.Error(), "directory ") || strings.Contains(err.Error(), "ai-workspace") {
		t.Errorf("wrap.write = the home: %v", err)
	}
}

func keys(m map[string]policy.Problem) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
