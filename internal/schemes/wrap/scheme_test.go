package wrap

import (
	"slices"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// explain on a wrap policy: every threat enforced with every layer measured active, and the
// policy's openings (read, env, network) named as gaps.
func TestThreatsNamePolicyGaps(t *testing.T) {
	var layers []executor.Layer
	for _, id := range sa.LayerIDs {
		layers = append(layers, executor.Layer{Name: id, Active: true})
	}
	p := policy.Default(wrapsec.Name)
	ts, err := verify.Explain(p, layers, Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ts {
		if th.Status != verify.Enforced && th.Note != "" && !strings.Contains(th.Note, "address space") {
			t.Errorf("the default wrap policy has a gap: %+v", th)
		}
	}
	wrapsec.Of(p).Read, wrapsec.Of(p).Env = []string{"/home/me/notes"}, []string{"GITHUB_TOKEN"}
	wrapsec.Of(p).SetNetwork(policy.Network{Mode: policy.NetAll})
	ts, _ = verify.Explain(p, layers, Scheme.Threats)
	var gaps []string
	for _, th := range ts {
		gaps = append(gaps, th.Note)
	}
	all := strings.Join(gaps, "|")
	for _, want := range []string{"/home/me/notes", "GITHUB_TOKEN", "every host"} {
		if !strings.Contains(all, want) {
			t.Errorf("explain does not name %q as a gap: %q", want, gaps)
		}
	}
	if Scheme.Relay == nil || Scheme.Runs() != nil {
		t.Error("the wrap scheme must run as a relay")
	}
}

// verify says what wrap refuses: the audit log inside a [wrap].write directory is MS406.
func TestAuditOwnFilesInWriteDirs(t *testing.T) {
	dir := t.TempDir()
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Write = []string{dir}
	p.Audit.Path = dir + "/audit.jsonl"
	var rules []string
	for _, f := range verify.Audit(p, "", Scheme.Audit) {
		rules = append(rules, f.Rule)
	}
	if !slices.Contains(rules, "MS406") {
		t.Errorf("audit log in wrap.write: verify said %v, want MS406", rules)
	}
	p.Audit.Path = t.TempDir() + "/audit.jsonl"
	rules = nil
	for _, f := range verify.Audit(p, "", Scheme.Audit) {
		rules = append(rules, f.Rule)
	}
	if slices.Contains(rules, "MS406") {
		t.Errorf("audit log outside wrap.write: verify said MS406")
	}
}

// trial36 F9: the policy file inside wrap.write is MS406 about the policy file, not labelled
// audit.path; the audit log there still is. Red without it (mutant policy-fix-generic).
func TestAuditOwnFilesKey(t *testing.T) {
	dir := t.TempDir()
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Write = []string{dir}
	p.Audit.Path = t.TempDir() + "/audit.jsonl"
	keyOf := func(path string) (string, bool) {
		for _, f := range verify.Audit(p, path, Scheme.Audit) {
			if f.Rule == "MS406" {
				return f.Key, true
			}
		}
		return "", false
	}
	if k, ok := keyOf(dir + "/wrap.toml"); !ok || k != "" {
		t.Errorf("the policy file in wrap.write: MS406 %t, key %q, want none", ok, k)
	}
	p.Audit.Path = dir + "/audit.jsonl"
	if k, ok := keyOf(""); !ok || k != "audit.path" {
		t.Errorf("the audit log in wrap.write: MS406 %t, key %q, want audit.path", ok, k)
	}
}
