package wrap

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify judges a wrap policy's openings as it judges the allowlist's workspace: writes in
// [wrap].write land directly, so a write directory that is a home, lies in its dot directories or
// a system directory (the host runs what is there) is high, one in a repository or holding tool
// or agent configuration medium; a directory of data is nothing. Before, a wrap policy had no
// audit of its own: write = [$HOME] passed verify. Catches wrap-audit-write.
func TestAuditWrapOpenings(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	mk := func(parts ...string) string {
		p := filepath.Join(parts...)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if os.Geteuid() == 0 {
			os.Chown(p, 65534, 65534) // the server's, as root (else MS505)
		}
		return p
	}
	data := mk(t.TempDir(), "data")
	// as root the server runs as nobody: a directory root owns (0755) refuses its every write
	// (trial35 F2); as another user, one that user cannot write. Catches wrap-write-owner-unchecked.
	notMine := filepath.Join(t.TempDir(), "notes")
	os.Mkdir(notMine, 0o755)
	if os.Geteuid() != 0 {
		os.Chmod(notMine, 0o555)
	}
	repo := t.TempDir()
	mk(repo, ".git")
	agent := mk(t.TempDir(), "notes")
	os.WriteFile(filepath.Join(agent, "CLAUDE.md"), []byte("obey\n"), 0o644)
	ci := mk(t.TempDir(), "proj")
	mk(ci, ".github", "workflows")
	link := filepath.Join(t.TempDir(), "h")
	os.Symlink(home, link)
	for _, c := range []struct {
		name string
		set  func(w *wrapsec.Wrap)
		want string // "" = no finding
	}{
		{"data", func(w *wrapsec.Wrap) { w.Write = []string{data} }, ""},
		{"home", func(w *wrapsec.Wrap) { w.Write = []string{home} }, "MS501"},
		{"home-link", func(w *wrapsec.Wrap) { w.Write = []string{link} }, "MS501"},
		{"local-bin", func(w *wrapsec.Wrap) { w.Write = []string{mk(home, ".local", "bin")} }, "MS501"},
		{"etc", func(w *wrapsec.Wrap) { w.Write = []string{"/etc/mcp-data"} }, "MS501"},
		{"root", func(w *wrapsec.Wrap) { w.Write = []string{"/"} }, "MS501"},
		{"var", func(w *wrapsec.Wrap) { w.Write = []string{"/var"} }, "MS501"},
		{"not-the-servers", func(w *wrapsec.Wrap) { w.Write = []string{notMine} }, "MS505"},
		{"in-repo", func(w *wrapsec.Wrap) { w.Write = []string{mk(repo, "out")} }, "MS502"},
		{"agent-file", func(w *wrapsec.Wrap) { w.Write = []string{agent} }, "MS502"},
		{"ci-anchored", func(w *wrapsec.Wrap) { w.Write = []string{ci} }, "MS502"},
		{"read-ssh", func(w *wrapsec.Wrap) { w.Read = []string{filepath.Join(home, ".ssh")} }, "MS504"},
		{"network-all", func(w *wrapsec.Wrap) { w.Egress = policy.Network{Mode: policy.NetAll} }, "MS503"},
		{"network-hosts", func(w *wrapsec.Wrap) { w.Egress, _ = policy.NetworkHosts("api.github.com") }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := policy.Default(wrapsec.Name)
			p.Audit.Path = filepath.Join(t.TempDir(), "audit.jsonl")
			c.set(wrapsec.Of(p))
			var rules []string
			for _, f := range verify.Audit(p, "", Scheme.Audit) {
				if f.Rule >= "MS500" && f.Rule < "MS600" {
					rules = append(rules, f.Rule)
				}
				if f.Rule == c.want && (f.Message == "" || f.Fix == "") {
					t.Errorf("%s without its message or fix: %+v", f.Rule, f)
				}
			}
			if c.want == "" && len(rules) > 0 || c.want != "" && !slices.Equal(rules, []string{c.want}) {
				t.Errorf("verify's wrap findings %v, want [%s]", rules, c.want)
			}
		})
	}
}

// MS504 says how a read directory reaches a home: the home itself is named as the home, not
// "~ lets the server read ~" (trial36 F1), and a dot directory as one.
func TestAuditWrapReadSaysHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for read, want := range map[string]string{
		home:                        home + " is the home directory " + home + ": the server reads what is there (keys in ~/.ssh",
		filepath.Join(home, ".ssh"): filepath.Join(home, ".ssh") + " lies in a dot directory of the home directory " + home,
		filepath.Dir(home):          filepath.Dir(home) + " contains the home directory " + home,
	} {
		p := policy.Default(wrapsec.Name)
		p.Audit.Path = filepath.Join(t.TempDir(), "audit.jsonl")
		wrapsec.Of(p).Read = []string{read}
		var got []string
		for _, f := range verify.Audit(p, "", Scheme.Audit) {
			if f.Rule == "MS504" {
				got = append(got, f.Message)
			}
		}
		if len(got) != 1 || !strings.Contains(got[0], want) {
			t.Errorf("read = [%s]: MS504 %q, want %q", read, got, want)
		}
	}
}
