package docker

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// The repository's core.hooksPath, in its own config or a file that config includes, relative
// or absolute inside the workspace, is protected; a path outside the workspace is not a
// workspace pattern.
func TestGitHooksProtect(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n\tbare = false\n\thooksPath = \"ci/git-hooks\" ; comment\n"+
		"[include]\n\tpath = more.conf\n[core] hookspath = ../outside\n"), 0o644)
	os.WriteFile(filepath.Join(ws, ".git", "more.conf"), []byte("[CORE]\n\tHooksPath = "+filepath.Join(ws, "tools", "hooks")+"\n"), 0o644)
	got := gitHooksProtect(ws)
	for _, want := range []string{"ci/git-hooks", "tools/hooks"} {
		if !slices.Contains(got, want) {
			t.Errorf("%q not protected: %q", want, got)
		}
	}
	for _, p := range got {
		if p == "../outside" || filepath.IsAbs(p) {
			t.Errorf("%q is not a workspace pattern", p)
		}
	}
}
