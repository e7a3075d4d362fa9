//go:build unix

package verify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A client config that is a link from the home into the workspace (a dotfiles directory used as
// the workspace) is MS410, naming the link and its target, with the fix; a link elsewhere is
// not (atk40 F6). Red with mutant verify-client-config-into-workspace.
func TestClientConfigLinkedIntoTheWorkspaceIsMS410(t *testing.T) {
	home, dots, other := t.TempDir(), t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	os.MkdirAll(filepath.Join(dots, "cursor"), 0o755)
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	os.WriteFile(filepath.Join(dots, "cursor", "mcp.json"), []byte("{}"), 0o600)
	os.WriteFile(filepath.Join(other, "settings.json"), []byte("{}"), 0o600)
	if os.Symlink(filepath.Join(dots, "cursor", "mcp.json"), filepath.Join(home, ".cursor", "mcp.json")) != nil ||
		os.Symlink(other, filepath.Join(home, ".gemini")) != nil {
		t.Skip("no symbolic links here")
	}
	p := policy.Default("allowlist")
	section.Of(p).Workspace = dots
	var got []Finding
	for _, f := range Audit(p, "", Auditor{}) {
		if f.Rule == "MS410" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "~/.cursor/mcp.json") || !strings.Contains(got[0].Fix, "cp --remove-destination") ||
		got[0].Severity != Medium {
		t.Fatalf("MS410 findings %+v, want one naming ~/.cursor/mcp.json with its fix", got)
	}
}
