package allowlist

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// MS107 is "every host": a host list init writes (and the policy file it renders, loaded back)
// is not reported as one; every host is, however it was set.
func TestAuditNetworkHostList(t *testing.T) {
	ws := t.TempDir()
	build := func(a generate.Answers) *policy.Policy {
		t.Helper()
		a.Scheme, a.Wizards = alsec.Name, map[string]*generate.Wizard{alsec.Name: wizard}
		Own(&a).Workspace, Own(&a).Allow = ws, []string{"wc"}
		p, err := generate.BuildPolicy(a)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "policy.toml")
		b, err := generate.RenderPolicy(p, path)
		if err != nil {
			t.Fatal(err)
		}
		back, err := policy.Parse(path, b)
		if err != nil {
			t.Fatal(err)
		}
		return back
	}
	if got := rules(auditOf(build(generate.Answers{Hosts: []string{"pypi", "api.example.com:443"}}), "")); slices.Contains(got, "MS107") {
		t.Errorf("a host list reported as every host: %v", got)
	}
	// Negative controls: every host is reported, from init's flag and from the key alone.
	if got := rules(auditOf(build(generate.Answers{Network: true}), "")); !slices.Contains(got, "MS107") {
		t.Errorf("network = true not reported: %v", got)
	}
	p := build(generate.Answers{})
	alsec.Of(p).Egress = policy.Network{Mode: policy.NetAll} // the key set, the old view not
	if got := rules(auditOf(p, "")); !slices.Contains(got, "MS107") {
		t.Errorf("network = true (Egress only) not reported: %v", got)
	}
}

// A command whose pinned path is gone is MS103 ("fix the path"), not MS102 (whose fix is for a
// writable binary) as well (trial35 F6); a writable one is still MS102.
func TestAuditMissingBinaryIsNotWritable(t *testing.T) {
	ws := t.TempDir()
	p, err := builtIn(ws)
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).Commands[0].Path = filepath.Join(t.TempDir(), "gone", "wcc")
	got := auditOf(p, "")
	if r := rules(got); slices.Contains(r, "MS102") || !slices.Contains(r, "MS103") {
		t.Errorf("a missing binary: %v", got)
	}
	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o777)
	os.Chmod(open, 0o777)
	b, err := os.ReadFile(alsec.Of(p).Commands[1].Path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(open, "wc"), b, 0o755)
	alsec.Of(p).Commands[0].Path = filepath.Join(open, "wc")
	if r := rules(auditOf(p, "")); !slices.Contains(r, "MS102") {
		t.Errorf("a binary in a directory everyone may write: %v", r)
	}
}
