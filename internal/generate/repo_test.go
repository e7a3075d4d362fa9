package generate

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// writeFile makes p's directory and writes s to it.
func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Trial30 F4: Claude Code keys its local scope by the git repository's top level (a linked
// worktree's main one, a submodule's own), found by walking up for .git without the git binary;
// init keyed it by the current directory, so from a repository's subdirectory the entry was
// never read. The layouts are those git makes (checked against Claude Code 2.1).
func TestRepoRoot(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	mk := func(p string) string {
		t.Helper()
		p = filepath.Join(root, p)
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	plain := mk("plain/a")
	repo := mk("repo")
	mk("repo/.git/worktrees/wt")
	sub := mk("repo/pkg/deep")
	// a linked worktree: .git file -> gitdir under worktrees/, whose gitdir file points back
	wt := mk("wt/sub")
	writeFile(t, filepath.Join(root, "wt/.git"), "gitdir: "+filepath.Join(repo, ".git/worktrees/wt")+"\n")
	writeFile(t, filepath.Join(repo, ".git/worktrees/wt/commondir"), "../..\n")
	writeFile(t, filepath.Join(repo, ".git/worktrees/wt/gitdir"), filepath.Join(root, "wt/.git")+"\n")
	// a copy of that .git file elsewhere: the worktree's gitdir does not point back at it
	copied := mk("copy/x")
	writeFile(t, filepath.Join(root, "copy/.git"), "gitdir: "+filepath.Join(repo, ".git/worktrees/wt")+"\n")
	// a submodule: .git file -> the superproject's .git/modules/mod (relative), not a worktree
	mod := mk("repo/mod/d")
	mk("repo/.git/modules/mod")
	writeFile(t, filepath.Join(repo, "mod/.git"), "gitdir: ../.git/modules/mod\n")
	junk := mk("junk/x")
	writeFile(t, filepath.Join(root, "junk/.git"), "not a gitdir line\n")
	if err := os.Symlink(repo, filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ dir, want string }{
		{plain, plain},
		{repo, repo},
		{sub, repo},
		{filepath.Join(root, "link/pkg/deep"), repo}, // real paths, as getcwd gives them
		{wt, repo},
		{copied, filepath.Join(root, "copy")},
		{mod, filepath.Join(repo, "mod")},
		{junk, filepath.Join(root, "junk")},
	} {
		if got := RepoRoot(c.dir); got != c.want {
			t.Errorf("RepoRoot(%s) = %s, want %s", c.dir, got, c.want)
		}
	}
}

// Where git is installed, RepoRoot agrees with it: a repository's top level is what git
// rev-parse --show-toplevel says; a linked worktree's is its main repository's (the common
// dir's parent), as Claude Code keys it.
func TestRepoRootAsGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git on PATH")
	}
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	git := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.email=t@t", "-c", "user.name=t"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	repo := filepath.Join(root, "repo")
	if err := os.MkdirAll(filepath.Join(repo, "a/b"), 0o755); err != nil {
		t.Fatal(err)
	}
	git(repo, "init", "-q")
	git(repo, "commit", "-q", "--allow-empty", "-m", "x")
	if got, want := RepoRoot(filepath.Join(repo, "a/b")), git(filepath.Join(repo, "a/b"), "rev-parse", "--show-toplevel"); got != want {
		t.Errorf("RepoRoot in a subdirectory = %s, git says %s", got, want)
	}
	wt := filepath.Join(root, "wt")
	git(repo, "worktree", "add", "-q", wt)
	common := git(wt, "rev-parse", "--path-format=absolute", "--git-common-dir")
	if got, want := RepoRoot(wt), filepath.Dir(common); got != want {
		t.Errorf("RepoRoot in a linked worktree = %s, want its main repository %s", got, want)
	}
}

// ResolveTarget keys claude-code's local scope by Env.Repo and says so when that is not the
// project directory; the other scopes and clients stay in the project directory.
func TestResolveTargetRepoKey(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "pkg")
	if err := os.MkdirAll(filepath.Join(root, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(sub)
	e, err := ProjectEnv("")
	if err != nil {
		t.Fatal(err)
	}
	if e.Project != sub || e.Repo != root {
		t.Fatalf("ProjectEnv in %s: Project %s, Repo %s; want the repository's top level %s as Repo", sub, e.Project, e.Repo, root)
	}
	tg, err := ResolveTarget("claude-code", e)
	if err != nil {
		t.Fatal(err)
	}
	if got := tg.Client.KeyPath; len(got) != 3 || got[1] != root {
		t.Errorf("claude-code local scope keyed %v, want under the repository's top level %s", got, root)
	}
	if !strings.Contains(tg.About(), "keys its local scope by the repository's top level, "+root) {
		t.Errorf("About does not name the key: %s", tg.About())
	}
	if tg, _ := ResolveTarget("claude-code:project", e); tg.Path != filepath.Join(sub, ".mcp.json") {
		t.Errorf("claude-code:project writes %s, want the project directory's .mcp.json", tg.Path)
	}
}

// An explicit --project in a repository's subdirectory keys Claude Code's local scope by the
// repository's top level too, and says so: Claude Code never reads the subdirectory's key
// (trial32 F26); its project files stay where --project says.
func TestExplicitProjectKeysTheRepository(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(root, "pkg")
	os.MkdirAll(filepath.Join(root, ".git"), 0o755)
	os.MkdirAll(sub, 0o755)
	t.Chdir(t.TempDir()) // elsewhere: only --project names the repository
	e, err := ProjectEnv(sub)
	if err != nil {
		t.Fatal(err)
	}
	tg, err := ResolveTarget("claude-code", e)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Client.KeyPath[1] != root || !strings.Contains(tg.About(), "repository's top level, "+root) {
		t.Errorf("with --project %s the local scope is keyed %v (about %q), want the repository's top level %s", sub, tg.Client.KeyPath, tg.About(), root)
	}
	if tg, _ := ResolveTarget("claude-code:project", e); tg.Path != filepath.Join(sub, ".mcp.json") {
		t.Errorf("claude-code:project writes %s, want --project's .mcp.json", tg.Path)
	}
}
