//go:build unix

package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A workspace and an audit log in another user's home (a directory only its owner may search) are
// named as out of reach, with the directory that stops this user; a path that merely does not
// exist is not (that is for "create it") (trial38 F1).
func TestForeignPathsNamesWhatThisUserCannotReach(t *testing.T) {
	top := t.TempDir()
	other := filepath.Join(top, "lead")
	for _, d := range []string{top, filepath.Dir(top)} { // t.TempDir's own are 0700: open them
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(other, "proj"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(other, 0o700); err != nil {
		t.Fatal(err)
	}
	restore := policy.ReachAsForTest(54321, []int{54321})
	t.Cleanup(func() { restore() })

	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace = filepath.Join(other, "proj")
	p.Audit.Path = filepath.Join(other, ".local", "state", "mcpsandbox", "audit.jsonl")
	fps := p.ForeignPaths()
	if len(fps) != 2 || fps[0].Key != "allowlist.workspace" || fps[1].Key != "audit.path" || !strings.Contains(fps[0].At, other) {
		t.Fatalf("ForeignPaths = %+v, want the workspace and audit.path, stopped at %s", fps, other)
	}
	msg := policy.ForeignError("/x/policy.toml", fps).Error()
	for _, want := range []string{"written for another user or machine", filepath.Join(other, "proj"), "audit.path", "mcpsandbox init --workspace"} {
		if !strings.Contains(msg, want) {
			t.Errorf("ForeignError lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(msg, "mkdir") {
		t.Errorf("ForeignError advises mkdir in another user's home:\n%s", msg)
	}

	// the owner, and a path that does not exist yet, are not foreign
	restore()
	restore = policy.ReachAsForTest(0, nil)
	if fps := p.ForeignPaths(); len(fps) != 0 {
		t.Errorf("root reaches all, got %+v", fps)
	}
	restore()
	restore = policy.ReachAsForTest(54321, []int{54321})
	p.Audit.Path = ""
	alsec.Of(p).Workspace = filepath.Join(t.TempDir(), "not", "yet")
	if fps := p.ForeignPaths(); len(fps) != 0 {
		t.Errorf("a workspace not made yet is not foreign, got %+v", fps)
	}
}
