//go:build unix

package allowlist

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify's own-file rules (MS404: the file's owner, its mode, its directory; MS406; MS407) give
// one fix, the concrete one serve's refusal names, on the fix line: the message holds no fix of
// its own (trial32 F9: MS404 printed "(fix: chmod o-w FILE)", then a general "fix:" line).
func TestOwnFileFindingsHaveOneFix(t *testing.T) {
	ws, dir := t.TempDir(), t.TempDir()
	file := filepath.Join(dir, "p.toml")
	if err := os.WriteFile(file, []byte("version = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root := os.Geteuid() == 0
	check := func(what, id, path, fix string, mutate func(p *policy.Policy)) {
		t.Helper()
		p, err := builtIn(ws)
		if err != nil {
			t.Fatal(err)
		}
		if mutate != nil {
			mutate(p)
		}
		for _, f := range auditOf(p, path) {
			if f.Rule != id {
				continue
			}
			if f.Fix != fix || strings.Contains(f.Message, "fix") || strings.Contains(f.Message, "This is refused") || !strings.Contains(f.Message, "refuse") {
				t.Errorf("%s: %s %q\n  fix: %q\nwant the message without a fix, saying it is refused, and the one fix %q", what, id, f.Message, f.Fix, fix)
			}
			return
		}
		t.Errorf("%s: no %s", what, id)
	}
	os.Chmod(file, 0o666)
	check("file writable by everyone", "MS404", file, "chmod o-w "+file, nil)
	os.Chmod(file, 0o620)
	if root {
		os.Chown(file, 0, 4321) // group 0 (root's) may write
	}
	check("file writable by its group", "MS404", file, "chmod g-w "+file, nil)
	os.Chmod(file, 0o600)
	if root {
		os.Chown(file, 4321, 0)
		check("file owned by another user", "MS404", file, "chown 0 "+file, nil)
		os.Chown(file, 0, 0)
	}
	os.Chmod(dir, 0o777)
	check("its directory writable by everyone", "MS404", file, "chmod o-w "+dir, nil)
	os.Chmod(dir, 0o700)

	inWS := filepath.Join(ws, "p.toml")
	os.WriteFile(inWS, []byte("version = 1\n"), 0o600)
	check("the policy in the workspace", "MS406", inWS, "move the policy outside the workspace (mcpsandbox init --policy-out FILE writes it elsewhere)", nil)
	read := t.TempDir()
	check("the audit log where commands read", "MS407", "", `set audit.path to a file outside it (or "" for the default under $XDG_STATE_HOME), or narrow allowlist.read_paths to the directories commands need`,
		func(p *policy.Policy) {
			alsec.Of(p).ReadPaths = []string{read}
			p.Audit.Path = filepath.Join(read, "audit.jsonl")
		})
}
