package wslayer

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"os/user"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/internal/xdg"
	"golang.org/x/sys/unix"
)

// gitGuard finds what the git set-ups holding a path make git run. For each directory from the
// path's up to / (a repository above the workspace counts: the workspace may be a folder of
// one), a repository rooted there (.git a directory, or a file "gitdir: X" of a linked worktree
// or submodule, with X's commondir) has config files (config, config.worktree, the common
// directory's config, and every file they include) that name core.hooksPath, a directory of
// programs git runs, and include.path / includeIf.*.path, config files git obeys. A change at
// or below one of those is refused, whoever's repository it is.
type gitGuard struct {
	ws, home string
	cache    map[string][]string // directory -> what the repository rooted there names (absolute)
	nested   []string            // what the repositories inside the workspace name (nestedOnce)
	walked   bool
	git      string   // the git binary, "" when the host has none
	global   []string // what the user's and the system's git config name
	// globalRel is what of that is relative to a repository's work tree (from its root)
	globalRel []string
	// wsReal is the workspace's path with its links followed; links maps a path from the
	// workspace root to the links in the workspace that lead there (followed to their end):
	// a file the host obeys may be a link to an ordinary one (.git/hooks/pre-commit ->
	// ../../scripts/pre-commit.sh, CLAUDE.md -> docs/agent.md), and writing that one writes it
	wsReal string
	links  map[string][]string
	nLinks int
	real   map[string]string // a named path -> the same with the links on its way followed
	// linkSeen: links recorded (found by the walk, in a hooks directory, on a protected path)
	linkSeen map[string]bool
	// protected says whether a protect pattern matches a path (from the root)
	protected func(rel string) bool
	// protTargets are where the links on protected paths lead (from the root): a link the call
	// makes above one moves what the protected name means (docs -> notes, for AGENTS.md ->
	// docs/missing.md)
	protTargets []string
	// importers are the agents' instruction files the walk found (CLAUDE.md, …); imported what
	// they import (imports_linux.go), importedBy the file importing each
	importers   []string
	imported    []string
	importedBy  map[string]string
	importsDone bool
	// runners are the agents' and editors' config files that start programs (runsConfig); run
	// the workspace's files they name, runBy the config naming each
	runners  []string
	run      []string
	runBy    map[string]string
	runsDone bool
	// host says whether the protect list's patterns match a path (from the root): only such a
	// config, which no call can have written, is read for the programs it starts (a call's
	// own mcp.json named 4,200 paths and filled the list first, attack round atk37 F1)
	host func(rel string) bool
	// runCut and importCut say which bound the programs' (imports') list or reads reached:
	// what the check did not read may name any path, so nothing not already found is
	// judged (refused, the bound named)
	runCut, importCut string
	// cut says which bound the walk reached; unlisted are the directories (from the root)
	// it did not list, partial the one whose listing it stopped in: what lies below them is
	// not judged (attack round atk37 F2)
	cut        string
	unlisted   map[string]bool
	partial    string
	partialSet bool
	// madeSet are the directories calls made (from the root) as serve's own record keeps
	// them where the workspace keeps no user xattrs (made_linux.go: loadMade)
	madeSet map[string]bool
	// foldCache holds the folded spelling of the paths covers compares
	foldCache map[string]string
	// runIndex maps the folded paths of run (as written and resolved) to the run path
	runIndex map[string]string
	// envs are the interpreter environments the walk found by their markers (envmarks_linux.go)
	envs map[string]string
	// rcPrefix are the names an .envrc or mise config loads by a prefix (rcloads_linux.go)
	rcPrefix map[string][]rcPrefix
	// hookPrefix are the names a hook manager's config merges in by a pattern (lefthook_linux.go)
	hookPrefix map[string][]namePrefix
	// pyPrefix are the names Python's import system tries for a module in a directory (NAME.*,
	// by the folded directory from the root: programs_linux.go); runRoot names a program the
	// follower read at the workspace's root, whose package is the whole workspace (atk40b F1, F5)
	pyPrefix map[string][]namePrefix
	runRoot  string
}

// maxLinks bounds the workspace's links the commit follows back (one walk's worth).
var maxLinks = 10_000 // a variable for the tests

// maxGitWalk bounds the walk for repositories inside the workspace (entries looked at).
var maxGitWalk = 100_000 // a variable for the tests

// maxWalkFiles bounds the regular files that walk lists (names only: a few seconds at most).
const maxWalkFiles = 2_000_000

func newGitGuard(ws string) *gitGuard {
	home, _ := os.UserHomeDir()
	git, _ := exec.LookPath("git")
	g := &gitGuard{ws: filepath.Clean(ws), home: home, git: git, cache: map[string][]string{},
		links: map[string][]string{}, real: map[string]string{}, linkSeen: map[string]bool{}, importedBy: map[string]string{}, runBy: map[string]string{}}
	g.wsReal = g.ws
	if r, err := filepath.EvalSymlinks(g.ws); err == nil {
		g.wsReal = r
	}
	// what the user's and the system's config name holds for every repository: a hook directory,
	// an include (an includeIf for the workspace's repositories), a program
	g.global = g.globalFor(g.ws)
	// a relative core.hooksPath (or program) there is relative to each repository's work tree:
	// the user's core.hooksPath = .hooks makes proj1/.hooks the hooks of the repository proj1 in
	// a workspace holding several. Read once more for another work tree, what changed is what
	// is relative, applied to each repository found (a workspace may hold hundreds: git is not
	// run again for each)
	if !mutated("workspace-git-global-rel") {
		probe := g.globalFor(filepath.Join(g.ws, ".mcpsandbox-probe"))
		for i := range g.global {
			if i < len(probe) && probe[i] == g.global[i] {
				continue
			}
			if r, err := filepath.Rel(g.ws, g.global[i]); err == nil {
				g.globalRel = append(g.globalRel, r)
			}
		}
	}
	return g
}

// globalFiles are the user's and the system's config files, where git looks for them (serve
// runs as the user whose git reads them): $GIT_CONFIG_GLOBAL or ~/.gitconfig and
// $XDG_CONFIG_HOME/git/config (~/.config/git/config), $GIT_CONFIG_SYSTEM or /etc/gitconfig.
func (g *gitGuard) globalFiles() []string {
	var out []string
	if f := os.Getenv("GIT_CONFIG_GLOBAL"); f != "" && !mutated("workspace-git-config-files") {
		out = append(out, f)
	} else if g.home != "" {
		out = append(out, filepath.Join(g.home, ".gitconfig"))
	}
	if x := xdg.Dir("XDG_CONFIG_HOME"); x != "" && !mutated("workspace-git-config-files") {
		out = append(out, filepath.Join(x, "git", "config"))
	} else if g.home != "" {
		out = append(out, filepath.Join(g.home, ".config", "git", "config"))
	}
	if f := os.Getenv("GIT_CONFIG_SYSTEM"); f != "" && !mutated("workspace-git-config-files") {
		return append(out, f)
	}
	return append(out, "/etc/gitconfig")
}

// globalFor is what the user's and the system's config name for a repository whose work tree
// is worktree.
func (g *gitGuard) globalFor(worktree string) []string {
	var out []string
	seen := map[string]bool{}
	for _, f := range g.globalFiles() {
		out = append(out, g.names(f, worktree, seen, 0)...)
	}
	return out
}

// match says what git set-up protects rel (a path from the workspace root), or "".
func (g *gitGuard) match(rel string) string {
	if g == nil || mutated("workspace-git-config") {
		return ""
	}
	if why := g.unwalked(rel); why != "" {
		return why
	}
	if why := g.importMatch(rel); why != "" {
		return why
	}
	if why := g.runMatch(rel); why != "" {
		return why
	}
	if why := g.envMatch(rel); why != "" {
		return why
	}
	abs := filepath.Join(g.ws, filepath.FromSlash(rel))
	// a repository inside the workspace may name paths outside its own tree (an include of
	// ../../shared.gitconfig, core.hooksPath = ../hooks)
	for _, p := range append(g.inside(), g.global...) {
		if g.covers(p, rel, false) {
			return "named by git's configuration (a repository in the workspace, or the user's or the system's config): core.hooksPath, an included config file or a program"
		}
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		for _, p := range g.rooted(d) {
			if g.covers(p, rel, false) {
				return "named by the git configuration of " + g.repoName(d) + " (core.hooksPath, an included config file or a program)"
			}
		}
		if d == "/" || d == "." {
			return ""
		}
	}
}

// inside is what the repositories inside the workspace name, found once per commit by a walk
// of the workspace (bounded; package trees that hold no repository of the user's are skipped).
func (g *gitGuard) inside() []string {
	if g.walked {
		return g.nested
	}
	g.walked = true
	g.fixedRunners()
	// breadth first, the host's directories before the ones calls made (madeMark): an earlier
	// call's directories, sorted before the host's repositories, cannot use up the walk
	queue, later := []string{g.ws}, []string(nil)
	n, files := 0, 0
	for len(queue) > 0 || len(later) > 0 {
		if len(queue) == 0 {
			queue, later = later, nil
		}
		d := queue[0]
		queue = queue[1:]
		if n++; n > maxGitWalk {
			g.cutAt(fmt.Sprintf("more than %d directories", maxGitWalk), append(append(queue, later...), d), "", false)
			break
		}
		subs, stop := g.list(d, &n, &files)
		if stop {
			why := fmt.Sprintf("more than %d directories", maxGitWalk)
			if files > maxWalkFiles {
				why = fmt.Sprintf("more than %d files", maxWalkFiles)
			}
			g.cutAt(why, append(append(queue, later...), subs...), d, true)
			break
		}
		for _, s := range subs {
			if g.made(s) {
				later = append(later, s)
			} else {
				queue = append(queue, s)
			}
		}
	}
	return g.nested
}

// cutAt records where the walk stopped: the directories left unlisted, and the one whose
// listing it stopped in (partial).
func (g *gitGuard) cutAt(why string, left []string, partial string, isPartial bool) {
	if mutated("workspace-walk-cut-open") {
		return
	}
	g.cut = why
	g.unlisted = map[string]bool{}
	for _, d := range left {
		g.unlisted[g.relOf(d)] = true
	}
	if isPartial {
		g.partial, g.partialSet = g.relOf(partial), true
	}
}

// relOf is the absolute path d from the workspace root ("" the root).
func (g *gitGuard) relOf(d string) string {
	if d == g.ws {
		return ""
	}
	return filepath.ToSlash(strings.TrimPrefix(d, g.ws+"/"))
}

// unwalked says why rel (from the root) is not judged ("" = it is): it is, or lies below, a
// directory the bounded walk did not list, or lies below the one it stopped listing. Such a
// directory may hold a nested repository's config, an agent's hook config or an instruction
// file that names rel; a path whose directory was listed in full is judged. (A config in an
// unlisted directory naming a path elsewhere is what the fixed-path reads of runs() cover for
// the agents' and editors' configs at the root.)
func (g *gitGuard) unwalked(rel string) string {
	g.inside()
	if g.cut == "" {
		return ""
	}
	say := func(d string) string {
		return "the workspace holds " + g.cut + " (the bound of the walk that finds nested repositories and agents' configs); " +
			strconv.Quote("/"+d) + " was not looked at, so what lies there is not judged, and not applied: fewer directories (or files) in the workspace, or a workspace that is a smaller folder, fix it"
	}
	for d := rel; ; d = path.Dir(d) {
		if d == "." {
			d = ""
		}
		if g.unlisted[d] {
			return say(d)
		}
		if g.partialSet && d == g.partial && d != rel {
			return say(d)
		}
		if d == "" {
			return ""
		}
	}
}

// madeMark marks the directories a commit creates (an extended attribute a call cannot set on
// the workspace: the commit copies none): the walk for repositories looks at them last.
const madeMark = "user.mcpsandbox.made"

func (g *gitGuard) made(dir string) bool {
	if mutated("workspace-walk-made-last") {
		return false
	}
	if g.madeSet[g.relOf(dir)] {
		return true
	}
	var b [1]byte
	_, err := unix.Lgetxattr(dir, madeMark, b[:])
	return err == nil
}

// list looks at the entries of the directory d for the walk: repositories (.git), links, and
// the directories to look at next; stop when a bound is passed.
func (g *gitGuard) list(d string, n, files *int) (subs []string, stop bool) {
	ents, _ := os.ReadDir(d)
	if g.envAt(d, ents) {
		return nil, false // an interpreter environment: protected whole
	}
	for _, e := range ents {
		p := filepath.Join(d, e.Name())
		// a file is only a name in its directory's listing (no open, no stat): files count
		// against a larger bound, so empty files an earlier call left (free under the quota)
		// cannot use up the walk before the repositories; directories cost the quota a block
		if (e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0) && e.Name() != ".git" && !mutated("workspace-walk-files") {
			if e.Type()&fs.ModeSymlink != 0 {
				g.addLink(p) // while maxLinks allows, and past it one on a protected path
			}
			if importers[e.Name()] && g.hostConfig(p) {
				if len(g.importers) < maxImporters {
					g.importers = append(g.importers, p)
				} else if g.importCut == "" && !mutated("workspace-runs-cut-open") {
					g.importCut = fmt.Sprintf("more than %d instruction files", maxImporters)
				}
			}
			if runsConfig(filepath.Base(d), e.Name()) && g.hostConfig(p) && !slices.Contains(g.runners, p) {
				if len(g.runners) < maxImporters {
					g.runners = append(g.runners, p)
				} else if g.runCut == "" && !mutated("workspace-runs-cut-open") {
					g.runCut = fmt.Sprintf("more than %d configs that start programs", maxImporters)
				}
			}
			if *files++; *files > maxWalkFiles {
				return subs, true
			}
			continue
		}
		if !e.IsDir() {
			if *n++; *n > maxGitWalk {
				return subs, true
			}
		}
		if e.Type()&fs.ModeSymlink != 0 {
			g.addLink(p)
		}
		switch {
		case e.Name() == ".git": // a directory, or the file of a linked worktree or submodule
			g.nested = append(g.nested, g.rooted(d)...)
			if e.IsDir() {
				g.hookLinks(p)
			}
		case e.IsDir() && e.Name() != "node_modules" && e.Name() != ".venv" && e.Name() != "__pycache__":
			subs = append(subs, p)
		}
	}
	return subs, false
}

// rooted is what the repository rooted at d names (nil when there is none).
func (g *gitGuard) rooted(d string) []string {
	if v, ok := g.cache[d]; ok {
		return v
	}
	var out []string
	gitdir := ""
	dotgit := filepath.Join(d, ".git")
	// Stat, not Lstat: git follows a .git that is a link (the layout of Android's repo tool)
	if st, err := os.Stat(dotgit); err == nil && st.IsDir() {
		gitdir = dotgit
	} else if err == nil && st.Mode().IsRegular() {
		// a cut read needs no refusal here: git takes the line after "gitdir: " as one path
		// (PATH_MAX at most), so a .git file (or commondir) longer than smallFile names
		// nothing git can use, and git refuses it as we read it
		if b, _, err := readSmall(dotgit, smallFile); err == nil {
			if v, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:"); ok {
				gitdir = absFrom(d, strings.TrimSpace(v))
			}
		}
	}
	if gitdir != "" {
		configs := []string{filepath.Join(gitdir, "config"), filepath.Join(gitdir, "config.worktree")}
		g.hookLinks(gitdir)
		if b, _, err := readSmall(filepath.Join(gitdir, "commondir"), smallFile); err == nil {
			common := absFrom(gitdir, strings.TrimSpace(string(b)))
			configs = append(configs, filepath.Join(common, "config"))
			g.hookLinks(common)
		}
		seen := map[string]bool{}
		for _, c := range configs {
			out = append(out, g.names(c, d, seen, 0)...)
		}
		for _, r := range g.globalRel {
			out = append(out, filepath.Join(d, r))
		}
	}
	g.cache[d] = out
	return out
}

var (
	gitSection  = lazy.Regexp(`^\s*\[\s*([A-Za-z0-9.-]+)`)
	gitKeyValue = lazy.Regexp(`^\s*([A-Za-z0-9-]+)\s*=\s*(.*?)\s*$`)
)

// names reads one config file: its core.hooksPath (relative to the worktree root), the files
// it includes, and the paths the programs it names lie at. Git itself reads the file where it
// is installed (`git config --file F --includes --show-origin --list`: continuation lines,
// comments, quoting, a BOM read as git reads them, every include followed); without git on
// the host nothing runs a hook, and a reader of the common forms stands in.
func (g *gitGuard) names(file, worktree string, seen map[string]bool, depth int) []string {
	if g.git != "" && !mutated("workspace-git-reader") {
		return g.gitNames(file, worktree, seen, depth)
	}
	return g.handNames(file, worktree, seen, depth)
}

// gitConfigLimit bounds one run of git reading a config (a few milliseconds; a variable for
// the test).
var gitConfigLimit = 2 * time.Second

// gitStuck remembers the configs git did not finish reading within gitConfigLimit, by path
// and identity (device, inode, size, change time): until one changes, the non-blocking reader
// reads it at once, and a FIFO it includes costs every later commit nothing.
var gitStuck sync.Map // string -> fileID

type fileID struct {
	dev, ino uint64
	size     int64
	ctime    int64
}

func idOf(st *unix.Stat_t) fileID {
	return fileID{uint64(st.Dev), st.Ino, st.Size, st.Ctim.Nano()}
}

// gitNames is names read by git.
func (g *gitGuard) gitNames(file, worktree string, seen map[string]bool, depth int) []string {
	if depth > 5 || seen[file] {
		return nil
	}
	seen[file] = true
	var st unix.Stat_t
	if err := unix.Stat(file, &st); err != nil {
		return nil
	}
	if id, ok := gitStuck.Load(file); ok && id == idOf(&st) {
		return g.handNames(file, worktree, seen, depth)
	}
	// A time limit: git opens what the config includes as it is, and an include that names a
	// FIFO (under /tmp, say) made git, the commit, and the workspace's lock wait for good
	// (attack round atk23). A git stopped at it is as one that refused the file.
	ctx, cancel := context.WithTimeout(context.Background(), gitConfigLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, g.git, "config", "--file", file, "--includes", "--show-origin", "--null", "--list")
	if mutated("workspace-git-unbounded") {
		cmd = exec.Command(g.git, "config", "--file", file, "--includes", "--show-origin", "--null", "--list")
	}
	cmd.Env = []string{"HOME=" + g.home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "PATH=/usr/bin:/bin"}
	cmd.WaitDelay = time.Second
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Run(); err != nil && (stdout.Len() == 0 || ctx.Err() != nil) {
		// git refused it: read what can be read (not yet seen by that reader: marked seen
		// above, it read nothing, and a config git refused named nothing)
		if ctx.Err() != nil {
			gitStuck.Store(file, idOf(&st))
		}
		delete(seen, file)
		return g.handNames(file, worktree, seen, depth)
	}
	var out []string
	type kv struct{ origin, key, val string }
	var kvs []kv
	fields := strings.Split(stdout.String(), "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		origin, _ := strings.CutPrefix(fields[i], "file:")
		key, val, _ := strings.Cut(fields[i+1], "\n")
		kvs = append(kvs, kv{origin, strings.ToLower(key), val})
	}
	for _, e := range kvs {
		if e.key == "core.worktree" {
			worktree = absFrom(filepath.Dir(file), e.val)
		}
	}
	for _, e := range kvs {
		if e.origin != "" && e.origin != file {
			out = append(out, absFrom(filepath.Dir(file), e.origin)) // an included file git read
		}
		switch {
		case e.key == "core.hookspath":
			out = append(out, g.expand(worktree, e.val))
		case (e.key == "init.templatedir" || e.key == "core.attributesfile") && !mutated("workspace-git-path-keys"):
			// a template directory's hooks are copied into, and run by, every repository git
			// init or git clone makes; an attributes file turns on the filters config names
			out = append(out, g.expand(worktree, e.val))
		case strings.HasPrefix(e.key, "includeif.") && strings.HasSuffix(e.key, ".path"), e.key == "include.path":
			// includeIf conditions are taken as true: the file may be read in some repository
			inc := g.expand(filepath.Dir(absFrom(filepath.Dir(file), e.origin)), e.val)
			out = append(out, inc)
			out = append(out, g.gitNames(inc, worktree, seen, depth+1)...)
		case programKey(e.key) && (!strings.HasPrefix(e.key, "alias.") || strings.HasPrefix(strings.TrimSpace(e.val), "!")):
			// an alias without "!" is a git command, not a program
			for _, p := range programPaths(e.val) {
				out = append(out, g.expand(worktree, p))
			}
		}
	}
	return out
}

// programKey: a config key whose value git runs (a program or a shell command line): the
// keys git documents as programs or commands, by their last part (gpg.ssh.program,
// mergetool.X.cmd, credential.URL.helper, filter.X.clean, remote.X.uploadpack, …), and every
// alias and pager.
func programKey(k string) bool {
	if strings.HasPrefix(k, "alias.") || strings.HasPrefix(k, "pager.") {
		return true
	}
	last := k[strings.LastIndexByte(k, '.')+1:]
	if mutated("workspace-git-program-args") { // the keys of the third round only
		return k == "core.fsmonitor" || k == "core.sshcommand" || k == "core.editor" || k == "core.pager" || k == "gpg.program" ||
			k == "credential.helper" || strings.HasPrefix(k, "filter.") || strings.HasPrefix(k, "diff.") && last == "command"
	}
	if strings.HasSuffix(last, "command") || strings.HasSuffix(last, "cmd") || strings.HasSuffix(last, "program") {
		return true // core.alternateRefsCommand, sendemail.sendmailCmd, gpg.x509.program, …
	}
	switch last {
	case "fsmonitor", "editor", "pager", "external", "helper", "askpass",
		"textconv", "driver", "clean", "smudge", "process", "gitproxy",
		"uploadpack", "receivepack", "difffilter", "browser", "smtpserver", "tunnel", "httpd":
		return true
	case "path":
		return strings.HasPrefix(k, "browser.") || strings.HasPrefix(k, "man.") || strings.HasPrefix(k, "mergetool.") || strings.HasPrefix(k, "difftool.")
	case "update":
		return strings.HasPrefix(k, "submodule.")
	}
	return false
}

// programPaths are the files a command line runs when they are paths: its program, and every
// word naming a path (python3 tools/strip.py runs tools/strip.py; -F ./ssh_config makes
// ssh obey ./ssh_config), and an interpreter's script named without a slash (sh lint.sh). A
// bare program name is found on PATH, which the workspace does not hold.
func programPaths(v string) []string {
	f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(v), "!"))
	var out []string
	script := len(f) > 0 && interpreter(path.Base(strings.Trim(f[0], `"'`))) && !mutated("workspace-git-program-args")
	for i, w := range f {
		w = strings.Trim(w, `"'`)
		if _, val, ok := strings.Cut(w, "="); ok && strings.HasPrefix(w, "-") {
			w = val // --file=tools/x
		}
		switch {
		case i > 0 && mutated("workspace-git-program-args"):
			return out
		case strings.Contains(w, "://"):
		case script && i > 1 && f[i-1] == "-m": // python -m mod imports ./mod.py from the work tree
			m := strings.ReplaceAll(w, ".", "/")
			out = append(out, m, m+".py")
			script = false
		case strings.Contains(w, "/"):
			out = append(out, w)
		case script && i > 0 && w != "" && !strings.HasPrefix(w, "-"):
			out = append(out, w)
			script = false
		}
	}
	return out
}

// interpreter: a program that runs the script its first argument names.
func interpreter(name string) bool {
	for _, p := range []string{"sh", "bash", "dash", "zsh", "ksh", "fish", "python", "perl", "ruby", "node", "php", "lua", "tclsh", "Rscript", "deno", "bun"} {
		if name == p || strings.HasPrefix(name, p) && strings.Trim(name[len(p):], "0123456789.") == "" {
			return true
		}
	}
	return false
}

// handNames is names read by the reader of the common forms.
func (g *gitGuard) handNames(file, worktree string, seen map[string]bool, depth int) []string {
	if depth > 5 || seen[file] {
		return nil
	}
	seen[file] = true
	b, cut, err := readSmall(file, smallFile)
	if err != nil {
		return nil
	}
	var out []string
	if cut {
		// git reads a config of any length: a key past the part read may name any path of
		// the repository (a core.hooksPath), so the whole work tree is named (fail closed)
		out = append(out, worktree)
	}
	section := ""
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		ln := sc.Text()
		if m := gitSection().FindStringSubmatch(ln); m != nil {
			section = strings.ToLower(m[1])
			if i := strings.IndexByte(ln, ']'); i >= 0 {
				ln = ln[i+1:]
			} else {
				continue
			}
		}
		m := gitKeyValue().FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		key, val := strings.ToLower(m[1]), strings.Trim(m[2], `"`)
		if val == "" {
			continue
		}
		switch {
		case key == "hookspath":
			out = append(out, g.expand(worktree, val))
		case key == "path" && (section == "include" || strings.HasPrefix(section, "includeif")):
			inc := g.expand(filepath.Dir(file), val)
			out = append(out, inc)
			out = append(out, g.names(inc, worktree, seen, depth+1)...)
		}
	}
	return out
}

func (g *gitGuard) expand(base, v string) string {
	if rest, ok := strings.CutPrefix(v, "~/"); ok && g.home != "" {
		return filepath.Join(g.home, rest)
	}
	// ~user/…, as git expands it (interpolate_path)
	if name, rest, ok := strings.Cut(strings.TrimPrefix(v, "~"), "/"); ok && strings.HasPrefix(v, "~") && name != "" && !mutated("workspace-git-config-files") {
		if u, err := user.Lookup(name); err == nil && u.HomeDir != "" {
			return filepath.Join(u.HomeDir, rest)
		}
	}
	return absFrom(base, v)
}

func absFrom(base, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// smallFile bounds the read of a git file, a git config read by hand and an instruction file
// (a config is small).
const smallFile = 256 << 10

// readSmall reads at most limit bytes of a file; cut says it holds more (one byte more is read
// to tell), so a caller that must judge the whole file can refuse what it did not read (attack
// round atk37b, F1: a require after a bundle's first 256 KiB was never seen).
func readSmall(p string, limit int) (b []byte, cut bool, err error) {
	// What is left of a budget charged after other reads may be below zero (review41 #3: a
	// slice b[:-948] panicked serve mid-commit): nothing is left, and a file there is cut.
	if limit < 0 && !mutated("wslayer-read-negative-limit") {
		limit = 0
	}
	// non-blocking, and a regular file only: a FIFO (or a link to one, or to a terminal) named
	// in the workspace must not hold the commit, and with it the workspace's lock, forever
	flags := os.O_RDONLY | syscall.O_NONBLOCK
	if mutated("wslayer-read-regular") {
		b, err = readAll(p, limit)
	} else {
		var f *os.File
		if f, err = os.OpenFile(p, flags, 0); err != nil {
			return nil, false, err
		}
		defer f.Close()
		if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
			return nil, false, fmt.Errorf("%s is not a regular file", p)
		}
		b, err = io.ReadAll(io.LimitReader(f, int64(limit)+1))
	}
	if err != nil {
		return nil, false, err
	}
	if len(b) > limit {
		return b[:limit], !mutated("workspace-follow-read-cut-open"), nil
	}
	return b, false, nil
}

// readAll is the read before it was bounded to regular files (mutant wslayer-read-regular).
func readAll(p string, limit int) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// repoName names the repository rooted at d for a refusal, which the program reads: by its
// path in the workspace, never by a host path outside it (a user's home, a project's name).
func (g *gitGuard) repoName(d string) string {
	r, err := filepath.Rel(g.ws, d)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return "the repository holding the workspace"
	}
	return "the repository at " + strconv.Quote("/"+filepath.ToSlash(strings.TrimPrefix(r, ".")))
}

// covers says whether the path rel (from the workspace root) is the named path p or lies
// below it (strictly below, with below), judged on the paths as written and with the links on
// their way followed: core.hooksPath = current/hooks where current -> releases/v2 makes
// releases/v2/hooks the hooks.
func (g *gitGuard) covers(p, rel string, below bool) bool {
	rp, ok := g.real[p]
	if !ok {
		if !mutated("workspace-git-realpath") {
			rp, _ = g.resolveAbs(p)
		}
		g.real[p] = rp
	}
	// folded: on a case-insensitive workspace Tools/server.js is tools/server.js
	fp, frp := g.folded(p), g.folded(rp)
	for _, abs := range []string{fold(filepath.Join(g.ws, filepath.FromSlash(rel))), fold(filepath.Join(g.wsReal, filepath.FromSlash(rel)))} {
		for _, q := range []string{fp, frp} {
			if q == "" {
				continue
			}
			if below && strings.HasPrefix(q, abs+"/") || !below && (abs == q || strings.HasPrefix(abs, q+"/")) {
				return true
			}
		}
	}
	return false
}

// folded is fold(p), kept: covers looks at the same paths for every entry of a commit.
func (g *gitGuard) folded(p string) string {
	if f, ok := g.foldCache[p]; ok {
		return f
	}
	if g.foldCache == nil {
		g.foldCache = map[string]string{}
	}
	f := fold(p)
	g.foldCache[p] = f
	return f
}

// below says what git set-up names a path strictly below rel ("" = none): a link at rel would
// move it (ci -> elsewhere when core.hooksPath = ci/hooks and ci/hooks is not there yet).
func (g *gitGuard) below(rel string) string {
	if g == nil || mutated("workspace-git-below") {
		return ""
	}
	all := append(append([]string(nil), g.inside()...), g.global...)
	for d := g.ws; ; d = filepath.Dir(d) {
		all = append(all, g.rooted(d)...)
		if d == "/" || d == "." {
			break
		}
	}
	for _, p := range all {
		if g.covers(p, rel, true) {
			return "a path git's configuration names (core.hooksPath, an included config file or a program)"
		}
	}
	if !mutated("workspace-agent-imports") {
		for _, p := range g.imports() {
			if g.covers(p, rel, true) {
				by, _ := filepath.Rel(g.ws, g.importedBy[p])
				return "a path the agent instruction file " + strconv.Quote(filepath.ToSlash(by)) + " imports (@path)"
			}
		}
	}
	if !mutated("workspace-link-below") {
		g.inside() // its walk finds the links
		for _, t := range g.protTargets {
			if strings.HasPrefix(t, rel+"/") {
				return "the file a protected link in the workspace leads to (" + strconv.Quote(t) + ")"
			}
		}
	}
	return ""
}

// resolveAbs follows the links on the way of the absolute path p, as the kernel would, taking
// what is not there as written; false past 40 links.
func (g *gitGuard) resolveAbs(p string) (string, bool) { return g.resolveWays(p, nil) }

// resolveWays is resolveAbs, adding to ways the path as spelled after each link followed: for
// AGENTS.md -> a/b.md where a -> c, a/b.md and c/b.md (a link the call puts at a moves it).
func (g *gitGuard) resolveWays(p string, ways *[]string) (string, bool) {
	todo := strings.Split(filepath.Clean(p), "/")
	cur := "/"
	if rest, ok := strings.CutPrefix(filepath.Clean(p), g.ws+"/"); ok {
		cur, todo = g.wsReal, strings.Split(rest, "/") // the workspace's own way, followed once
	}
	for n := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part)
		t, err := os.Readlink(next)
		if err != nil { // not a link, or not there: as written
			cur = next
			continue
		}
		if n++; n > 40 {
			return "", false
		}
		if filepath.IsAbs(t) {
			cur = "/"
		}
		todo = append(strings.Split(t, "/"), todo...)
		if ways != nil {
			*ways = append(*ways, filepath.Join(append([]string{cur}, todo...)...))
		}
	}
	return cur, true
}

// addLink records the workspace's link at abs under the path it leads to, when that lies in
// the workspace.
func (g *gitGuard) addLink(abs string) {
	if g.linkSeen[abs] || g.nLinks >= maxLinks && !g.keepLink(abs) {
		return
	}
	g.linkSeen[abs] = true
	keep := g.keepLink(abs)
	var ways []string
	wp := &ways
	if !keep || mutated("workspace-link-below") {
		wp = nil
	}
	to, ok := g.resolveWays(abs, wp)
	if !ok {
		return
	}
	l0 := filepath.ToSlash(strings.TrimPrefix(abs, g.ws+"/"))
	for _, w := range ways { // where a protected link leads, as spelled on the way
		if r, ok := strings.CutPrefix(w, g.wsReal+"/"); ok {
			r = filepath.ToSlash(r)
			g.protTargets = append(g.protTargets, r)
			// a directory the call puts where a link on the way was (a -> c replaced by a/)
			// holds what the protected link means
			g.links[r] = append(g.links[r], l0)
		}
	}
	r, err := filepath.Rel(g.wsReal, to)
	if err != nil || r == ".." || strings.HasPrefix(r, "../") {
		return
	}
	l, err := filepath.Rel(g.ws, abs)
	if err != nil {
		return
	}
	r = filepath.ToSlash(r)
	g.links[r] = append(g.links[r], filepath.ToSlash(l))
	g.nLinks++
	if keep {
		g.protTargets = append(g.protTargets, r)
	}
}

// hookLinks records the links among the hooks of the git directory gd: git runs what they
// lead to.
func (g *gitGuard) hookLinks(gd string) {
	ents, err := os.ReadDir(filepath.Join(gd, "hooks"))
	if err != nil {
		return
	}
	for _, e := range ents {
		if e.Type()&fs.ModeSymlink != 0 {
			g.addLink(filepath.Join(gd, "hooks", e.Name()))
		}
	}
}

// aliases are the other paths (from the workspace root) that name rel through links in the
// workspace: a link leading to rel, or to a directory rel lies in.
func (g *gitGuard) aliases(rel string) []string {
	if g == nil || mutated("workspace-link-alias") {
		return nil
	}
	g.inside() // its walk finds the links
	// the hooks of the repositories holding rel, whatever the walk reached: earlier calls may
	// have put 100,000 entries before them in its order (since atk37 F2 a change in a directory
	// the walk did not reach is refused anyway; this names the real reason when the walk did
	// reach it, and has no mutant of its own: the fail-closed bound covers it)
	for d := path.Dir(rel); ; d = path.Dir(d) {
		g.rooted(filepath.Join(g.ws, filepath.FromSlash(d)))
		if d == "." || d == "/" {
			break
		}
	}
	var out []string
	for pre := rel; ; pre = path.Dir(pre) {
		for _, l := range g.links[pre] {
			if len(out) > maxAliases { // enough to exhaust the judgement's budget
				return out
			}
			if pre == "." {
				out = append(out, path.Join(l, rel))
			} else {
				out = append(out, l+strings.TrimPrefix(rel, pre))
			}
		}
		if pre == "." || pre == "/" {
			return out
		}
	}
}

// gitDirAt says which directory holding rel (from the root) is a git directory by its content
// in the workspace ("" = none): a link may lead into one that this call's layer does not hold.
func (g *gitGuard) gitDirAt(rel string) string {
	if g == nil {
		return ""
	}
	for d := path.Dir(rel); ; d = path.Dir(d) {
		abs := filepath.Join(g.ws, filepath.FromSlash(d))
		has := func(n string) bool { _, err := os.Lstat(filepath.Join(abs, n)); return err == nil }
		if has("HEAD") && (has("commondir") || has("objects") && has("refs")) {
			return d
		}
		if d == "." || d == "/" {
			return ""
		}
	}
}

// keepLink: the link at abs lies on a protected path (a hooks directory, CLAUDE.md, a
// .github/workflows entry): a call cannot make one, so these are the host's and always
// followed, past maxLinks too (links an earlier call made could fill that).
func (g *gitGuard) keepLink(abs string) bool {
	if g.protected == nil || mutated("workspace-walk-files") {
		return false
	}
	r, ok := strings.CutPrefix(abs, g.ws+"/")
	if !ok {
		return false
	}
	r = filepath.ToSlash(r)
	return g.protected(r) || strings.Contains("/"+r, "/.git/hooks/")
}

// protectedLinks records the links on the literal protect patterns' own paths from the root
// (CLAUDE.md, .github of .github/workflows, .config of .config/git), looked at directly: the
// walk may never reach them (an earlier call may have put 100,000 entries before them in its
// order), and a call cannot make such a link, so none of these is the call's own padding.
func (g *gitGuard) protectedLinks(pats []string) {
	if g == nil {
		return
	}
	for _, pat := range pats {
		pat = strings.Trim(pat, "/")
		if pat == "" || strings.ContainsAny(pat, "*?[\\") {
			continue
		}
		p := g.ws
		for _, part := range strings.Split(pat, "/") {
			p = filepath.Join(p, part)
			st, err := os.Lstat(p)
			if err != nil {
				break
			}
			if st.Mode()&fs.ModeSymlink != 0 {
				g.addLink(p)
				break
			}
		}
	}
}
