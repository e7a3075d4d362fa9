//go:build unix

package verify

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/homelinks"
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

// A home whose dot-directories pass the walk's bound past the client places is named: a link
// into the workspace past it is seen neither by verify nor by serve (atk41 F5). Red when MS410
// says nothing of it (mutant verify-ms410-short).
func TestHomePastTheBoundIsMS410(t *testing.T) {
	home, ws := t.TempDir(), t.TempDir()
	t.Setenv("HOME", home)
	big := filepath.Join(home, ".mozilla")
	os.MkdirAll(big, 0o755)
	for i := 0; i <= homelinks.MaxEntries; i++ {
		if err := os.WriteFile(filepath.Join(big, strconv.Itoa(i)), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	p := policy.Default("allowlist")
	section.Of(p).Workspace = ws
	var got []Finding
	for _, f := range Audit(p, "", Auditor{}) {
		if f.Rule == "MS410" {
			got = append(got, f)
		}
	}
	if len(got) != 1 || !strings.Contains(got[0].Message, "~/.mozilla") || !strings.Contains(got[0].Message, strconv.Itoa(homelinks.MaxEntries)) || !strings.Contains(got[0].Fix, "protect") {
		t.Fatalf("MS410 findings %+v, want one naming where the walk stopped and the bound", got)
	}
}
