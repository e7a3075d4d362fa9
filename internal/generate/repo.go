package generate

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// ProjectEnv is HostEnv with the project directory resolved: --project as given (made absolute),
// else the current directory. Its Claude Code local-scope key is the git repository it is in
// (RepoRoot), as Claude Code keys it, --project's too: a subdirectory given as --project was
// the key as it was, which Claude Code never reads (trial32 F26).
func ProjectEnv(project string) (Env, error) {
	env, err := HostEnv(project)
	if err != nil {
		return env, err
	}
	given := env.Project != ""
	if !given {
		if env.Project, err = os.Getwd(); err != nil {
			return env, fmt.Errorf("find the project directory: %w (give --project DIR)", err)
		}
	}
	if env.Project, err = filepath.Abs(env.Project); err != nil {
		return env, err
	}
	if !mutated("init-claude-repo-key") && (!given || !mutated("init-claude-project-key-literal")) {
		env.Repo = RepoRoot(env.Project)
	}
	return env, nil
}

// RepoRoot is the directory Claude Code keys its local scope by for a session started in dir:
// the nearest directory holding a .git entry (a directory, or a file as in worktrees and
// submodules), found without the git binary, as Claude Code finds it; for a linked worktree its
// main repository's top level (Claude Code shares one local scope among a repository's
// worktrees; git rev-parse --show-toplevel names the worktree instead). Outside a work tree it
// is dir. Paths are real (symlinks resolved), as getcwd gives them.
func RepoRoot(dir string) string {
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	if top, ok := workTreeTop(dir); ok {
		return mainWorktree(top)
	}
	return dir
}

// workTreeTop is the nearest directory from dir up holding a .git entry, and whether there is one.
func workTreeTop(dir string) (string, bool) {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d, true
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// mainWorktree is the main repository's top level when root is a linked worktree (its .git file
// names a gitdir under the common dir's worktrees/, whose gitdir file names root's .git back),
// else root: a submodule's .git file names a gitdir too, but not under worktrees/.
func mainWorktree(root string) string {
	b, err := os.ReadFile(filepath.Join(root, ".git")) // a .git directory fails here: root it is
	if err != nil {
		return root
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return root
	}
	gd := relTo(root, strings.TrimSpace(gitdir))
	common, err := readRel(gd, "commondir")
	if err != nil || filepath.Dir(gd) != filepath.Join(common, "worktrees") {
		return root
	}
	back, err := readRel(gd, "gitdir")
	if err != nil || policy.RealPath(back) != filepath.Join(policy.RealPath(root), ".git") {
		return root // a .git file copied from another worktree
	}
	if filepath.Base(common) != ".git" { // a bare repository's worktree: the repository is common
		return policy.RealPath(common)
	}
	return policy.RealPath(filepath.Dir(common))
}

// readRel reads the path in the file name of dir, relative to dir when it is not absolute.
func readRel(dir, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return "", err
	}
	return relTo(dir, strings.TrimSpace(string(b))), nil
}

func relTo(dir, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	return filepath.Clean(p)
}
