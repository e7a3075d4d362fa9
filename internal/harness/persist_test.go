package harness

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestProtectedRel(t *testing.T) {
	pats := persistPatterns([]string{"docs/agents/*.md", "!CLAUDE.md"})
	for rel, want := range map[string]bool{
		"CLAUDE.md":                true, // a trim of the defaults is ignored: writing it is still persistence
		"sub/dir/CLAUDE.md":        true,
		".husky/pre-commit":        true,
		".github/workflows/ci.yml": true,
		"x/.github/workflows/a":    false, // anchored at the root
		"docs/agents/a.md":         true,
		"docs/agents/a.txt":        false,
		"src/conftest.py":          true,
		"a/b/__pycache__/m.pyc":    true,
		"notes.txt":                false,
		"Makefile":                 false,
		"package.json":             false,
	} {
		if got := protectedRel(rel, pats); got != want {
			t.Errorf("%s: protected=%v, want %v", rel, got, want)
		}
	}
}

// The detector's view of a workspace: core.hooksPath honoured (relative, quoted, case of the
// key), a symlinked .git followed, and only what changed reported.
func TestHostRunFiles(t *testing.T) {
	ws := t.TempDir()
	w := func(rel, content string) {
		p := filepath.Join(ws, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w("store/config", "[core]\n\tHooksPath = \"ci/hooks\"\n")
	if err := os.Symlink("store", filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	w("ci/hooks/pre-commit", "#!/bin/sh\ntrue\n")
	w("notes.txt", "x")
	if hp := gitHooksPath(ws); hp != filepath.Join(ws, "ci/hooks") {
		t.Fatalf("core.hooksPath read as %q", hp)
	}
	pats := persistPatterns(nil)
	before := hostRunFiles(ws, pats)
	if _, ok := before[filepath.Join(ws, "store/config")]; !ok {
		t.Errorf("the symlinked .git's config is not watched: %v", before)
	}
	if len(changedHostRun(before, hostRunFiles(ws, pats), ws)) != 0 {
		t.Fatal("nothing changed, yet a change is reported")
	}
	w("notes.txt", "changed, but not host-run")
	w("ci/hooks/pre-commit", "#!/bin/sh\necho pwned\n")
	w("AGENTS.md", "obey")
	got := strings.Join(changedHostRun(before, hostRunFiles(ws, pats), ws), "; ")
	if got != "changed ci/hooks/pre-commit; created AGENTS.md" {
		t.Errorf("changes: %q", got)
	}
	// A hooksPath outside the workspace is not the workspace's to watch.
	w("store/config", "[core]\n\thooksPath = /etc\n")
	if hp := gitHooksPath(ws); hp != "" {
		t.Errorf("core.hooksPath outside the workspace read as %q", hp)
	}
}
