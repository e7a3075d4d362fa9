package wrap

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// explain's verdict on each opening of a wrap policy is true for what it opens (trial35 F5:
// read = write = [one data directory] was "NOT enforced  read secrets in HOME …"): a directory
// of data, listed hosts or named variables open only themselves (partly, naming them); a home,
// its dot directories, /etc, a repository or every host leave the threat open (NOT enforced).
// Catches explain-opening-not-enforced.
func TestExplainWrapVerdicts(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	data := filepath.Join(t.TempDir(), "notes")
	repo := t.TempDir()
	for _, d := range []string{data, filepath.Join(repo, ".git"), filepath.Join(home, ".ssh")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var layers []executor.Layer
	for _, id := range sa.LayerIDs {
		layers = append(layers, executor.Layer{Name: id, Active: true})
	}
	const read, write, env, net = "read secrets in HOME", "write rc files", "read the client's environment", "phone home"
	hosts, _ := policy.NetworkHosts("registry.npmjs.org")
	for _, c := range []struct {
		name   string
		set    func(w *wrapsec.Wrap)
		threat string
		status verify.Status
		note   string
	}{
		{"read-data", func(w *wrapsec.Wrap) { w.Read = []string{data} }, read, verify.Partly, "wrap.read opens only " + data},
		{"read-home", func(w *wrapsec.Wrap) { w.Read = []string{home} }, read, verify.NotEnforced, "it lets the server read " + home},
		{"read-ssh", func(w *wrapsec.Wrap) { w.Read = []string{filepath.Join(home, ".ssh")} }, read, verify.NotEnforced, "it lets the server read"},
		{"read-etc", func(w *wrapsec.Wrap) { w.Read = []string{"/etc"} }, read, verify.NotEnforced, "/etc"},
		{"read-none", func(w *wrapsec.Wrap) {}, read, verify.Enforced, ""},
		{"write-data", func(w *wrapsec.Wrap) { w.Write = []string{data} }, write, verify.Partly, "wrap.write opens only " + data + " to writes"},
		{"write-home", func(w *wrapsec.Wrap) { w.Write = []string{home} }, write, verify.NotEnforced, "is the home directory"},
		{"write-repo", func(w *wrapsec.Wrap) { w.Write = []string{repo} }, write, verify.NotEnforced, "is a repository"},
		{"write-root", func(w *wrapsec.Wrap) { w.Write = []string{"/"} }, write, verify.NotEnforced, "wrap.write opens /"},
		{"env-named", func(w *wrapsec.Wrap) { w.Env = []string{"GITHUB_TOKEN"} }, env, verify.Partly, "wrap.env passes GITHUB_TOKEN"},
		{"env-none", func(w *wrapsec.Wrap) {}, env, verify.Enforced, ""},
		{"net-hosts", func(w *wrapsec.Wrap) { w.SetNetwork(hosts) }, net, verify.Partly, "registry.npmjs.org"},
		{"net-all", func(w *wrapsec.Wrap) { w.SetNetwork(policy.Network{Mode: policy.NetAll}) }, net, verify.NotEnforced, "every host"},
		{"net-none", func(w *wrapsec.Wrap) {}, net, verify.Enforced, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := policy.Default(wrapsec.Name)
			c.set(wrapsec.Of(p))
			ts, err := verify.Explain(p, layers, Scheme.Threats)
			if err != nil {
				t.Fatal(err)
			}
			for _, th := range ts {
				if !strings.HasPrefix(th.Threat, c.threat) {
					continue
				}
				if th.Status != c.status || !strings.Contains(th.Note, c.note) {
					t.Errorf("%s: %s %q, want %s with %q", c.threat, th.Status, th.Note, c.status, c.note)
				}
				return
			}
			t.Fatalf("no threat %q", c.threat)
		})
	}
	// the layer missing here, a directory of data is no longer partly: nothing holds the rest
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Read = []string{data}
	var off []executor.Layer
	for _, l := range layers {
		off = append(off, executor.Layer{Name: l.Name, Active: l.Name != sa.LayerLandlockFS, Detail: "no landlock here"})
	}
	ts, _ := verify.Explain(p, off, Scheme.Threats)
	if th := ts[0]; !strings.HasPrefix(th.Threat, read) || th.Status != verify.NotEnforced {
		t.Errorf("without Landlock: %+v", th)
	}
}
