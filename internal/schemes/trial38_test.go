package schemes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A policy a team lead committed names their workspace and audit log, in their home: a teammate's
// verify said "permission denied … create it: mkdir -p /home/lead/proj" and nothing about whose
// policy it is. Now one MS409 says it was written for another user or machine, names both paths,
// and says how to make one's own; no finding advises mkdir there (trial38 F1). Red with mutant
// verify-foreign-policy.
func TestAuditSaysAPolicyWasWrittenForAnotherUser(t *testing.T) {
	lead := filepath.Join(t.TempDir(), "lead") // stands for a home this user cannot search
	text := `version = 1
scheme = "allowlist"
name = "sandbox"

[audit]
path = "` + lead + `/.local/state/mcpsandbox/audit.jsonl"

[allowlist]
workspace = "` + lead + `/proj"

[[allowlist.commands]]
name = "wc"
path = "/usr/bin/wc"
sha256 = "0000000000000000000000000000000000000000000000000000000000000000"
`
	path := filepath.Join(t.TempDir(), "policy.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := policy.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	old := policy.Unreachable
	t.Cleanup(func() { policy.Unreachable = old })
	policy.Unreachable = func(p string) string {
		if strings.HasPrefix(p, lead+"/") {
			return lead + " (owner uid 1000, mode -rwx------)"
		}
		return ""
	}
	sc, err := Lookup(p.Scheme)
	if err != nil {
		t.Fatal(err)
	}
	fs := verify.Audit(p, path, sc.Audit)
	var got *verify.Finding
	for i := range fs {
		if fs[i].Rule == "MS409" {
			got = &fs[i]
		}
		if strings.Contains(fs[i].Fix, "mkdir") && strings.Contains(fs[i].Fix, lead) {
			t.Errorf("advises mkdir in another user's home: %+v", fs[i])
		}
	}
	if got == nil || got.Severity != verify.High || !strings.Contains(got.Message, "written for another user or machine") ||
		!strings.Contains(got.Message, lead+"/proj") || !strings.Contains(got.Message, "audit.path") ||
		!strings.Contains(got.Fix, "mcpsandbox init") {
		t.Fatalf("no MS409 naming the workspace and audit.path: %+v", fs)
	}
}
