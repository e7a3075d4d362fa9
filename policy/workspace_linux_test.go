package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The shared rule says what the allowlist scheme's own start-up check says, word for word, so
// moving that check onto it changes none of its messages.
func TestCheckWorkspacePathSpeaksAsTheAllowlist(t *testing.T) {
	root := t.TempDir()
	os.Symlink("/etc", filepath.Join(root, "etclink"))
	os.MkdirAll(filepath.Join(root, "a", "b"), 0o755)
	u := policy.WorkspaceUse{Key: "allowlist.workspace", Harm: "commands could write what the host runs"}
	for _, conf := range []string{"/", "/etc", "/usr", "/var/run", filepath.Join(root, "etclink"), "/usr/local/share",
		filepath.Join(root, "a", "b", "..", "..") + "/../../etc", root, filepath.Join(root, "a")} {
		ws, err := filepath.EvalSymlinks(conf)
		if err != nil {
			continue
		}
		got, want := policy.CheckWorkspacePath(conf, ws, u), sa.CheckWorkspace(conf)
		if (got == nil) != (want == nil) || got != nil && got.Error() != want.Error() {
			t.Errorf("workspace %s: shared rule says %v, the allowlist %v", conf, got, want)
		}
	}
}
