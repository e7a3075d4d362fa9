package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// What an allowed .envrc or a trusted mise config loads is protected by what loads it, not by
// how its name looks (attack round atk40 F11): direnv trusts every file an allowed .envrc
// loads (it hashes only .envrc), and mise's trust covers the config file only, so a call that
// wrote `.envrc.private` (source_env_if_exists), `.env` (a bare `dotenv`), `.env.local`
// (dotenv_if_exists) or what mise's `_.file`/`_.source` name had its shell code run, or its
// LD_PRELOAD exported, at the user's next cd. Those files were protected only when they
// existed or looked like scripts. Now, for each such config: every name starting with `.env`
// in its directory (.env, .env.local, .envrc.private, …), there or not; every word after a
// direnv stdlib verb that loads or watches a file (source_env*, source_up*, dotenv*,
// watch_file, source and `.`), and nix's files for `use nix`/`use flake`; and every string of
// mise's `_.file`, `_.source`, `_.path`, `_.python.venv` (and the legacy env_file, dotenv,
// env_path). A word built from a variable or a template protects the names starting with its
// literal part; a mise path that starts with a template other than {{config_root}} protects
// the config's directory whole (at the root: nothing unjudged is applied).

// rcPrefix is a name prefix protected in a directory: the names there starting with it.
type rcPrefix = namePrefix

// direnvLoads are direnv's stdlib verbs (and the shell's) whose words name files it loads or watches.
var direnvLoads = map[string]bool{"find_up": true, "source_env": true, "source_env_if_exists": true, "source_up": true, "source_up_if_exists": true,
	"dotenv": true, "dotenv_if_exists": true, "watch_file": true, "source": true, ".": true}

// miseConfig: a mise config file the follower reads (hookWords), named name in a directory
// named dir: every name mise loads in a project (its LOCAL_CONFIG_FILENAMES and the MISE_ENV
// forms: mise.toml, .mise.toml, mise.local.toml, mise.<env>.toml, mise.<env>.local.toml, the
// legacy .rtx.toml, mise/config.toml, .mise/config.toml, .config/mise.toml,
// .config/mise/config.toml and their <env> and local forms), and .tool-versions.
func miseConfig(dir, name string) bool {
	switch name {
	case "mise.toml", ".mise.toml", "mise.local.toml", ".mise.local.toml":
		return true
	}
	if mutated("protect-roundatk40b") {
		return false
	}
	return name == ".tool-versions" || miseName().MatchString(name) ||
		(dir == "mise" || dir == ".mise") && miseDirName().MatchString(name)
}

var (
	miseName    = lazy.Regexp(`^\.?(?:mise|rtx)(?:\.[^/]+)?\.toml$`)
	miseDirName = lazy.Regexp(`^config(?:\.[^/]+)?\.toml$`)
)

// miseRoot is the directory a mise config's relative paths and {{config_root}} name: the
// project's, above .config/, mise/ or .mise/.
func miseRoot(file string) string {
	dir := filepath.Dir(file)
	switch filepath.Base(dir) {
	case ".config":
		return filepath.Dir(dir)
	case "mise", ".mise":
		if d := filepath.Dir(dir); filepath.Base(d) == ".config" && filepath.Base(dir) == "mise" {
			return filepath.Dir(d)
		} else if miseDirName().MatchString(filepath.Base(file)) {
			return d
		}
	}
	return dir
}

// rcLoads protects what the config file (an .envrc or a mise config) with text loads.
func (f *follower) rcLoads(file, text string) {
	dir := filepath.Dir(file)
	switch name := filepath.Base(file); {
	case name == ".envrc":
		if mutated("workspace-follow-envrc-loads") {
			return
		}
		f.direnv(file, dir, text)
	case miseConfig(filepath.Base(dir), name):
		if mutated("workspace-follow-mise-loads") {
			return
		}
		dir = miseRoot(file)
		if name == ".tool-versions" {
			f.toolVersions(file, dir, text)
			return
		}
		f.mise(file, dir, text)
	default:
		return
	}
	f.prefix(dir, ".env", file) // .env, .env.local, .envrc.private, …: there or not
}

// prefix protects the names in dir starting with prefix.
func (f *follower) prefix(dir, prefix, by string) {
	g := f.g
	if dir != g.ws && !strings.HasPrefix(dir, g.ws+"/") {
		return
	}
	if g.rcPrefix == nil {
		g.rcPrefix = map[string][]rcPrefix{}
	}
	key := fold(g.relOf(dir))
	for _, r := range g.rcPrefix[key] {
		if r.prefix == fold(prefix) {
			return // one line after another naming it
		}
	}
	if _, ok := g.rcPrefix[key]; len(g.rcPrefix[key]) >= maxImporters || !ok && len(g.rcPrefix) >= maxImporters {
		if g.runCut == "" && !mutated("workspace-runs-cut-open") {
			g.runCut = fmt.Sprintf("more than %d names loaded by a prefix from one directory", maxImporters)
		}
		return
	}
	g.rcPrefix[key] = append(g.rcPrefix[key], rcPrefix{fold(prefix), by})
}

// rcLoad protects what the word w (a path as the config wrote it) loads, from dir: the file
// there or not (followed when it is there); for a word built from a variable or a template,
// the names starting with its literal part. whole: a start the follower cannot place protects
// dir whole.
func (f *follower) rcLoad(by, dir, w string, depth int, whole bool) (followed string) {
	w = strings.Trim(w, `"'`+"`;&|()")
	for _, v := range []string{"$PWD/", "${PWD}/", "$(pwd)/", "{{config_root}}/", "{{ config_root }}/"} {
		if rest, ok := strings.CutPrefix(w, v); ok {
			w = "./" + rest
		}
	}
	if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~") || strings.Contains(w, "://") {
		return
	}
	if i := strings.IndexAny(w, "$*?[{"); i >= 0 {
		lit := w[:i]
		if lit == "" {
			// a start the reader cannot place fails closed, for direnv's loading verbs too (atk41
			// F1: `source "$(git rev-parse --show-toplevel)/x"`, `${U:-x}`, `${PWD%/}` returned here)
			if (whole || !mutated("workspace-follow-envrc-fail-closed") && !inherited(w)) && !homeTemplate().MatchString(w) {
				f.wholeDir(by, dir)
			}
			return // $HOME/…: not the workspace
		}
		p := absFrom(dir, lit)
		if strings.HasSuffix(lit, "/") {
			f.add(p, by)
			return
		}
		f.prefix(filepath.Dir(p), filepath.Base(p), by)
		return
	}
	p := absFrom(dir, w)
	if st, err := os.Stat(p); err == nil && st.IsDir() && filepath.Base(by) == ".envrc" {
		p = filepath.Join(p, ".envrc") // source_env DIR loads DIR/.envrc
	}
	if f.add(p, by) && regular(p) {
		f.todo = append(f.todo, todoFile{p, by, depth + 1})
		return p
	}
	return ""
}

// wholeDir protects the config's directory whole; at the workspace's root, nothing not already
// judged is applied.
func (f *follower) wholeDir(by, dir string) {
	if dir != f.g.ws {
		f.add(dir, by)
		return
	}
	if f.g.runCut == "" {
		r, _ := filepath.Rel(f.g.ws, by)
		f.g.runCut = fmt.Sprintf("a path in %s that starts with a template (it may name any file)", strconv.Quote(filepath.ToSlash(r)))
	}
}

// direnvPathVerbs are direnv's stdlib verbs whose words are directories put on a search path:
// PATH_add, MANPATH_add, load_prefix (its bin, sbin on PATH, lib on LD_LIBRARY_PATH, …),
// path_add VAR (after the variable's name: PYTHONPATH's sitecustomize.py runs at every start).
var direnvPathVerbs = map[string]bool{"PATH_add": true, "MANPATH_add": true, "load_prefix": true, "path_add": true}

// layoutPaths are what direnv's `layout KIND` puts on PATH or in a loader variable, beside its
// layout directory .direnv.
var layoutPaths = map[string][]string{"node": {"node_modules/.bin"}, "go": {"bin"}, "php": {"vendor/bin"},
	"pipenv": {"Pipfile", ".venv"}, "poetry": {"pyproject.toml", ".venv"}, "uv": {"pyproject.toml", ".venv"}, "julia": {"Project.toml"}}

// useFiles are what `use KIND` evaluates from the .envrc's directory (nix's shellHook is shell
// code; `use vim` has vim source .vimrc.local).
var useFiles = map[string][]string{"nix": {"shell.nix", "default.nix"}, "flake": {"flake.nix", "flake.lock"},
	"devenv": {"devenv.nix", "devenv.yaml", "devenv.local.nix", "devenv.lock"}, "vim": {".vimrc.local"}}

// shellRunners run the script their first word that is not an option names, there or not
// (`bash tools/on-enter`, `bash setup`).
var shellRunners = map[string]bool{"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "fish": true, "python": true,
	"python3": true, "node": true, "deno": true, "bun": true, "ruby": true, "perl": true, "php": true, "lua": true, "exec": true}

// direnv protects what the .envrc file (text) loads: every word the program names as a path.
func (f *follower) direnv(file, dir, text string) {
	f.shellText(file, dir, text)
}

// shellText protects what the shell program text (an .envrc, a file it sources, a mise hook or
// task) run from dir loads: the words after direnv's loading verbs (and nix's files for `use
// nix`), the directories its path verbs name (whole), the script a runner runs, every word that
// names a path (whole), and, in an assignment, what the variable makes programs load (envValue).
func (f *follower) shellText(by, dir, text string) {
	f.shellWalk(by, dir, []string{dir}, text, func(d string, words []string, vars *shellVars) {
		f.shellStatement(by, d, words, vars)
		if !mutated("workspace-envrc-nested") {
			// `sh -c 'cd server && python3 main.py'` in an .envrc ran server/main.py, unread
			// (fix48-f's neighbour): its nested codes are read as a started script's
			f.scriptNested(by, d, words, nil, vars)
		}
	})
}

// maxShellDirs bounds the directories a shell program's cd names, past which it fails closed.
const maxShellDirs = 16

// shellWalk reads the shell program text (of the file by, in the directory self) run from each
// of dirs, and has visit judge each statement (variables expanded) from each directory the
// program may be in: a cd, pushd or popd adds the one it names (atk41 F1: `cd tools; source
// ./x.sh` was judged from the .envrc's directory), keeping the others (a cd in a subshell
// changes nothing after it); one the reader cannot place fails closed (runCut).
func (f *follower) shellWalk(by, self string, dirs []string, text string, visit func(dir string, words []string, vars *shellVars)) *shellVars {
	vars := newShellVars(dirs[0])
	vars.m[selfDir] = self
	started := self != by && filepath.Base(by) != ".envrc" && !miseConfig(filepath.Base(filepath.Dir(by)), filepath.Base(by))
	if started {
		vars.m["PWD"] = unresolvedSub // a script a config starts runs where the config does: not known
		// a name a config's env or another protected file may set (APP_DIR = "lib"):
		// ${APP_DIR:-app} is not app, and what it is the reader does not know (atk42 F4's
		// default read as the value; atk44a F2)
		f.startedEnv(f.cur, text, vars)
	}
	from := f.g.ws // a started script runs from its config's directory or the root: the root's
	if !started && !mutated("workspace-shell-git-top-nested") {
		from = self // an .envrc or a mise config runs where it is (a nested repository's)
	}
	vars.m[gitTop] = f.repoTop(from)
	stmts := shellStatements(text)
	vars.unmodeled(stmts)
	f.shellRun(by, &dirs, stmts, vars, visit)
	return vars
}

// repoTop is what `git rev-parse --show-toplevel` prints run from dir: the nearest directory
// from dir up holding a .git (a repository's, or a worktree's or a submodule's .git file), in
// the workspace or above it (`cd "$(git rev-parse --show-toplevel)/proj/server"` from a
// workspace proj inside a repository); unresolved when none does (git fails: not known, never
// the user's environment). A call makes no .git (protected).
func (f *follower) repoTop(dir string) string {
	for d := f.g.wsSpelled(filepath.Clean(dir)); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if d == f.g.ws && mutated("workspace-git-top-above") || d == filepath.Dir(d) {
			return unresolvedSub
		}
	}
}

// shellRun is shellWalk's walk of the statements stmts: a `for` loop over literal words has its
// body walked once for each (atk42 F4: `for d in app; do python3 "$d/main.py"; done` failed
// closed), bounded by maxShellSteps statements in all (past it, the variable stays unresolved).
func (f *follower) shellRun(by string, dirs *[]string, stmts [][]string, vars *shellVars,
	visit func(dir string, words []string, vars *shellVars)) {
	for i := 0; i < len(stmts); i++ {
		if f.g.runCut != "" {
			return // past a bound nothing else is judged anyway
		}
		vars.steps++
		if name, values, end, ok := forLoop(stmts, i, vars); ok && vars.steps+len(values)*(end-i) <= maxShellSteps &&
			!mutated("workspace-shell-idioms") {
			for _, v := range values {
				vars.m[name] = v
				body := make([][]string, 0, end-i-1)
				for _, st := range stmts[i+1 : end] {
					body = append(body, slices.Clone(st))
				}
				f.shellRun(by, dirs, body, vars, visit)
			}
			vars.m[name] = unresolvedSub
			i = end
			continue
		}
		words := stmts[i]
		vars.raw = slices.Clone(words) // as a single-quoted code is handed on (rawCodes)
		for j := range words {
			words[j] = vars.expand(words[j])
		}
		if k := command(words); k < len(words) && (words[k] == "cd" || words[k] == "pushd" || words[k] == "popd") &&
			!mutated("workspace-follow-envrc-cd") {
			*dirs = f.shellCd(by, *dirs, words[k:], vars)
			continue
		}
		queued := len(f.todo)
		for _, d := range *dirs {
			visit(d, slices.Clone(words), vars)
		}
		if vars.opaque {
			f.startedUnseen(queued) // what it starts now may find any name set (atk44a F2)
		}
		if loadsNames(words) && !mutated("workspace-shell-default-opaque") {
			// what a sourced file, an eval or a computed declaration sets is not seen (`set -a;
			// source .env`, `export $(cat .env)`): a default after it (${APP_DIR:-app}) is then
			// not known to be what runs (atk43 F6, atk44a F1)
			vars.opaque = true
		}
	}
}

// maxShellSteps bounds the statements one shell program's walk takes, loops unrolled.
const maxShellSteps = 1 << 16

// forLoop reads the statement stmts[i] as `for NAME in WORDS` whose words are literal (no
// expansion left, no pattern): the name, the words, and the index of the `done` that ends it.
func forLoop(stmts [][]string, i int, vars *shellVars) (name string, values []string, end int, ok bool) {
	name, list, end, ok := forHead(stmts, i)
	if !ok {
		return "", nil, 0, false
	}
	for _, w := range list {
		if w = vars.expand(w); strings.ContainsAny(w, "$*?[`") {
			return "", nil, 0, false
		}
		values = append(values, w)
	}
	return name, values, end, true
}

// forHead reads the statement stmts[i] as `for NAME in WORDS` (or select's): the name, the
// words unexpanded, and the index of the `done` that ends it.
func forHead(stmts [][]string, i int) (name string, list []string, end int, ok bool) {
	st := stmts[i]
	k := command(st)
	if k+3 > len(st) || st[k] != "for" && st[k] != "select" || st[k+2] != "in" {
		return "", nil, 0, false
	}
	depth := 1
	for j := i + 1; j < len(stmts); j++ {
		c := command(stmts[j])
		if c >= len(stmts[j]) {
			continue
		}
		switch stmts[j][c] {
		case "for", "while", "until", "select":
			depth++
		case "done":
			if depth--; depth == 0 {
				return st[k+1], st[k+3:], j, true
			}
		}
	}
	return "", nil, 0, false
}

// shellCd adds the directory the cd statement words (cd, pushd, popd and their words) changes
// into to dirs; one it cannot place fails closed.
func (f *follower) shellCd(by string, dirs, words []string, vars *shellVars) []string {
	var to string
	ops, _ := lineRedirects(words) // `cd > /dev/null app`: the redirection's file is no operand (fix47-c)
	for _, w := range ops[1:] {
		if !strings.HasPrefix(w, "-") && !strings.HasPrefix(strings.TrimLeft(w, "0123456789&"), ">") {
			to = w
			break
		}
	}
	if words[0] == "popd" || to == "" && words[0] == "pushd" {
		return dirs // back to a directory already in dirs
	}
	fail := func() []string {
		if f.g.runCut == "" {
			prog := by
			if strings.HasPrefix(f.cur, f.g.ws+"/") && !mutated("workspace-shell-idioms") {
				prog = f.cur // the script being read, not the config that starts it (atk42 F4)
			}
			r, _ := filepath.Rel(f.g.ws, prog)
			f.g.runCut = fmt.Sprintf("a shell program (%s) that changes directory to what the check cannot place (%s %s): "+
				"every file may be what it loads next; name the directory literally", strconv.Quote(filepath.ToSlash(r)),
				words[0], strconv.Quote(to))
		}
		return dirs
	}
	if to == "" || strings.HasPrefix(to, "~") || unresolved(to) >= 0 || len(dirs) >= maxShellDirs {
		return fail()
	}
	vars.set("PWD", unresolvedSub) // which of dirs it is: not known
	inside := false
	for _, d := range slices.Clone(dirs) {
		targets := []string{to}
		if !mutated("workspace-shell-cd-expand") {
			targets = f.shellWord(by, d, to, globCd) // as a config line's cd (atk48a F3, F6's neighbour)
		}
		for _, t := range targets {
			p := absFrom(d, t)
			if !mutated("workspace-shell-idioms") {
				p = f.g.wsSpelled(p) // the workspace's real path names the same directory (atk41 F9)
			}
			if p != f.g.ws && !strings.HasPrefix(p, f.g.ws+"/") {
				continue // `cd ..` back from a directory below, or out of the workspace from the root
			}
			inside = true
			if slices.Contains(dirs, p) {
				continue
			}
			if len(dirs) >= maxShellDirs {
				return fail() // a pattern's directories past the bound
			}
			dirs = append(dirs, p)
		}
	}
	if !inside {
		return fail()
	}
	return dirs
}

// shellStatement judges one statement's words (variables expanded), recording its assignments in vars.
func (f *follower) shellStatement(by, dir string, words []string, vars *shellVars) {
	for i, w := range words {
		if name, value, ok := assignment(w); ok {
			if !mutated("workspace-follow-envrc-loader-export") {
				f.envValue(by, dir, name, value)
			}
			vars.assign(w)
			continue
		}
		args := words[i+1:]
		switch {
		case w == "use" || strings.HasPrefix(w, "use_"):
			kind, rest := strings.TrimPrefix(w, "use_"), args
			if w == "use" && len(args) > 0 {
				kind, rest = args[0], args[1:]
			}
			if useFiles[kind] == nil {
				continue
			}
			for _, n := range useFiles[kind] {
				f.rcLoad(by, dir, n, 0, false)
			}
			for _, a := range rest {
				a, _, _ = strings.Cut(a, "#") // a flake's output: .#dev
				if a != "." && a != "" && !strings.HasPrefix(a, "-") {
					f.rcLoad(by, dir, a, 0, false)
				}
			}
		case direnvLoads[w] || w == "find_up":
			dirs := []string{dir}
			if strings.HasPrefix(w, "source_up") || w == "find_up" {
				// FILE (.envrc when none) in each directory above: the workspace's part of them
				for d := filepath.Dir(dir); strings.HasPrefix(d+"/", f.g.ws+"/"); d = filepath.Dir(d) {
					dirs = append(dirs, d)
				}
			}
			for _, a := range args {
				for _, d := range dirs {
					if p := f.rcLoad(by, d, a, 0, false); p != "" && w != "watch_file" {
						f.rcShell(by, p)
					}
				}
			}
		case mutated("workspace-follow-envrc-path-words"):
		case direnvPathVerbs[w]:
			if w == "path_add" && len(args) > 0 {
				args = args[1:] // the variable's name
			}
			for _, a := range args {
				f.loadPath(by, dir, w, a)
			}
		case w == "layout" && len(args) > 0:
			f.add(filepath.Join(dir, ".direnv"), by)
			for _, p := range layoutPaths[args[0]] {
				f.add(filepath.Join(dir, p), by)
			}
		case shellRunners[w]:
			for _, a := range args {
				if !strings.HasPrefix(a, "-") {
					f.rcLoad(by, dir, a, 0, false) // the script, there or not
					break
				}
			}
		}
		if !mutated("workspace-follow-envrc-path-words") {
			f.pathWord(by, dir, w)
		}
	}
}

// rcShell marks p, a file the config by sources, to be read as its shell is (follow).
func (f *follower) rcShell(by, p string) {
	if mutated("workspace-follow-envrc-sourced") || !f.inRun[p] {
		return
	}
	if f.rcSourced == nil {
		f.rcSourced = map[string]string{}
	}
	if _, ok := f.rcSourced[p]; !ok {
		f.rcSourced[p] = by
	}
}

// rcSourcedText reads the file t (read by follow) as the shell that sources it does, when an
// .envrc or a mise config sources it.
func (f *follower) rcSourcedText(t todoFile, text string) {
	if _, ok := f.rcSourced[t.path]; !ok {
		return
	}
	dir := filepath.Dir(t.by) // run from the config's directory (source_env of another .envrc: from its own)
	if filepath.Base(t.path) == ".envrc" {
		dir = filepath.Dir(t.path)
	}
	if miseConfig(filepath.Base(filepath.Dir(t.by)), filepath.Base(t.by)) {
		dir = miseRoot(t.by)
	}
	f.shellText(t.by, dir, text)
}

// unresolved is where the word w holds what the reader could not resolve (a variable it does
// not know, a command's output, a template), -1 when nowhere.
func unresolved(w string) int {
	i := strings.IndexByte(w, '$')
	if j := strings.Index(w, "{{"); j >= 0 && (i < 0 || j < i) {
		i = j
	}
	return i
}

// inherited: w starts with a variable of the user's environment (upper case, not assigned by
// the program): a value from outside the workspace, as the program found it ($PATH, $GOPATH/bin).
func inherited(w string) bool {
	n := strings.TrimPrefix(strings.TrimPrefix(w, "$"), "{")
	i := 0
	for i < len(n) && (n[i] == '_' || n[i] >= 'A' && n[i] <= 'Z' || i > 0 && n[i] >= '0' && n[i] <= '9') {
		i++
	}
	if strings.HasPrefix(w, "${") && !mutated("workspace-follow-envrc-fail-closed") {
		// ${NAME:-default}, ${NAME%/}: what the reader cannot tell (the default may be the workspace's);
		// `${NAME` alone is a loader value's piece split at ':' (${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:})
		return i > 0 && (i == len(n) || n[i] == '}')
	}
	return strings.HasPrefix(w, "$") && i > 0 && (i == len(n) || n[i] == '}' || n[i] == '/' || n[i] == ':')
}

// envValue protects what the variable name set to value makes the user's programs load: for
// PATH and every loader variable (policy.CodeLoadingEnv) each word of it (split at white space,
// ':', '=' and ','), a path from dir, failing closed on one the reader cannot resolve; for any
// other variable, its words that name a path.
func (f *follower) envValue(by, dir, name, value string) {
	loader := name == "" || name == "PATH" || policy.CodeLoadingEnv(name)
	for _, w := range strings.FieldsFunc(value, func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == ':' || r == '=' || r == ','
	}) {
		if loader {
			f.loadPath(by, dir, name, w)
		} else {
			f.pathWord(by, dir, w)
		}
	}
}

// loadPath protects w, a search path's entry or a loader variable's word, from dir: the path
// whole, there or not; the workspace's root (or above) or a word the reader cannot resolve
// leaves the config's directory whole, at the root nothing unjudged applied.
func (f *follower) loadPath(by, dir, what, w string) {
	if strings.HasPrefix(w, "-") && !strings.HasPrefix(w, "--") {
		w = strings.TrimLeft(w[1:], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") // -r./boot.rb, -I/ws/lib
	}
	if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~") || strings.Contains(w, "//") {
		return
	}
	if i := unresolved(w); i >= 0 {
		lit := w[:i]
		if lit == "" && (inherited(w) || homeTemplate().MatchString(w)) {
			return // the user's own environment, not the workspace
		}
		p := absFrom(dir, lit)
		switch {
		case lit == "" || f.covers(p):
			f.failClosed(by, dir, what, w) // it may be the root
		case strings.HasSuffix(lit, "/"):
			f.add(p, by)
		default:
			f.prefix(filepath.Dir(p), filepath.Base(p), by)
		}
		return
	}
	p := absFrom(dir, w)
	switch {
	case p == f.g.ws:
		f.failClosed(by, dir, what, w)
		return
	case f.covers(p):
		return // above the workspace: its files are not there
	}
	if f.add(p, by) && regular(p) {
		f.todo = append(f.todo, todoFile{p, by, 1})
	}
}

// covers: p is the workspace's root or a directory above it (every file of it is below p).
func (f *follower) covers(p string) bool {
	return p == f.g.ws || p == "/" || strings.HasPrefix(f.g.ws, p+"/")
}

// failClosed protects the config's directory whole for a search path or loader word it cannot
// place (or that names the root); at the workspace's root nothing not already judged is applied.
func (f *follower) failClosed(by, dir, what, w string) {
	if f.narrow != "" && f.narrow != f.g.ws {
		f.add(f.narrow, by) // a config's env, a script's export: the directory of the file that sets it
		return
	}
	if f.narrow == "" && dir != f.g.ws && !f.covers(absFrom(dir, w[:max(unresolved(w), 0)])) {
		f.add(dir, by)
		return
	}
	if f.g.runCut == "" {
		r, _ := filepath.Rel(f.g.ws, by)
		f.g.runCut = fmt.Sprintf("a search path or loader variable in %s (%s %s) that names the workspace's root or what the check cannot resolve: "+
			"every file may be loaded; name a directory below the root literally (PATH_add bin, PYTHONPATH=$PWD/src)",
			strconv.Quote(filepath.ToSlash(r)), what, strconv.Quote(w))
	}
}

// pathWord protects what the word w names from dir when it names a path (a '/' in it, or a
// leading '.'): whole, there or not, and read when it is a file; a word built from what the
// reader cannot resolve, by its literal start.
func (f *follower) pathWord(by, dir, w string) {
	if w == "" || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "~") || strings.Contains(w, "//") ||
		!strings.Contains(w, "/") && (!strings.HasPrefix(w, ".") || w == "." || w == "..") {
		return
	}
	if i := unresolved(w); i >= 0 {
		lit := w[:i]
		if lit == "" || !strings.Contains(lit, "/") {
			return
		}
		if p := absFrom(dir, lit); !f.covers(p) {
			if strings.HasSuffix(lit, "/") {
				f.add(p, by)
			} else {
				f.prefix(filepath.Dir(p), filepath.Base(p), by)
			}
		}
		return
	}
	p := absFrom(dir, w)
	if f.covers(p) {
		return
	}
	if f.add(p, by) && regular(p) {
		f.todo = append(f.todo, todoFile{p, by, 1})
	}
}

var (
	tomlString  = lazy.Regexp(`"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'`)
	tomlHeader  = lazy.Regexp(`^\s*\[\[?\s*([^\]]*?)\s*\]\]?\s*(?:#.*)?$`)
	miseLoadKey = lazy.Regexp(`(?:^|\.)_(?:\.|$)`)
	// homeTemplate: a path from the user's home or another absolute place, not the workspace
	homeTemplate = lazy.Regexp(`^(?:\$\{?HOME\b|\$\{?XDG_|\{\{\s*env\.(?:HOME|XDG_)|\{\{\s*xdg_)`)
)

// mise protects what the mise config file (text) loads, from dir (its config_root): the
// strings of its env directives (_.file, _.source, _.path, …); every other [env] value as the
// variable it sets makes programs load (envValue: PATH and the loader variables fail closed);
// every string of [hooks] (shell run at a cd: enter, cd, leave, …) and [tasks] as shell; and a
// [tools] version `path:DIR` (its bin on PATH).
func (f *follower) mise(file, dir, text string) {
	lines := strings.Split(text, "\n")
	section := ""
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		if m := tomlHeader().FindStringSubmatch(line); m != nil {
			section = strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(m[1])
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k = strings.NewReplacer(" ", "", "\t", "", `"`, "", "'", "").Replace(k)
		full := k
		if section != "" {
			full = section + "." + k
		}
		var strs []string
		if t := strings.TrimSpace(v); strings.HasPrefix(t, `"""`) || strings.HasPrefix(t, "'''") {
			// a multi-line string (a hook's or task's script), to its closing quotes
			q := t[:3]
			body := t[3:]
			if j := miseValueEnd(lines, i, func(l string) bool { return strings.Contains(l, q) }, strings.Contains(body, q)); j > i {
				body += "\n" + strings.Join(lines[i+1:j+1], "\n")
				i = j
			}
			body, _, _ = strings.Cut(body, q)
			if q == `"""` {
				body = tomlBasic(body, true)
			}
			strs = []string{body}
		} else {
			// the value, to where its brackets close (an array or inline table over several lines)
			depth := bracketDepth(v)
			if j := miseValueEnd(lines, i, func(l string) bool { depth += bracketDepth(l); return depth <= 0 }, depth <= 0); j > i {
				v += "\n" + strings.Join(lines[i+1:j+1], "\n")
				i = j
			}
			for _, m := range tomlString().FindAllStringSubmatch(v, -1) {
				strs = append(strs, tomlBasic(m[1], false)+m[2])
			}
		}
		top, _, _ := strings.Cut(full, ".")
		switch {
		case k == "env_file" || k == "dotenv" || k == "env_path" ||
			(full == "env" || strings.HasPrefix(full, "env.")) && miseLoadKey().MatchString(strings.TrimPrefix(full, "env")):
			for _, s := range strs {
				if p := f.rcLoad(file, dir, s, 0, true); p != "" {
					f.rcShell(file, p)
				}
			}
		case mutated("workspace-follow-mise-env-hooks"):
		case top == "env":
			name := "" // env = { … }: any variable
			if rest, ok := strings.CutPrefix(full, "env."); ok {
				name, _, _ = strings.Cut(rest, ".")
			}
			for _, s := range strs {
				f.envValue(file, dir, name, miseTemplates(s, dir))
			}
		case top == "hooks" || top == "tasks" && !taskData[full[strings.LastIndexByte(full, '.')+1:]]:
			for _, s := range strs {
				f.shellText(file, dir, miseTemplates(s, dir))
			}
		case top == "tools":
			for _, s := range strs {
				if rest, ok := strings.CutPrefix(s, "path:"); ok {
					f.loadPath(file, dir, "path:", miseTemplates(rest, dir))
				}
			}
		}
	}
}

// taskData are a mise task's keys that are not shell (its outputs are the task's to write).
var taskData = map[string]bool{"description": true, "sources": true, "outputs": true, "alias": true, "depends": true,
	"depends_post": true, "wait_for": true, "usage": true, "confirm": true, "hide": true}

// miseTemplate: a template mise fills in with a directory of the project, and one of the environment.
var (
	miseDirTemplate = lazy.Regexp(`\{\{-?\s*(?:config_root|cwd|env\.PWD)\s*-?\}\}`)
	miseEnvTemplate = lazy.Regexp(`\{\{-?\s*env\.([A-Za-z_][A-Za-z0-9_]*)\s*-?\}\}`)
)

// miseTemplates resolves s's templates that name the config's directory dir; one of a variable
// of the environment reads as the shell's ${NAME}.
func miseTemplates(s, dir string) string {
	if !strings.Contains(s, "{{") {
		return s
	}
	s = miseDirTemplate().ReplaceAllLiteralString(s, dir)
	return miseEnvTemplate().ReplaceAllString(s, "$${$1}")
}

// toolVersions protects the directories an asdf/mise .tool-versions line's `path:DIR` version
// names (their bin on PATH at a cd).
func (f *follower) toolVersions(file, dir, text string) {
	if mutated("workspace-follow-mise-env-hooks") {
		return
	}
	for _, w := range strings.Fields(text) {
		if rest, ok := strings.CutPrefix(w, "path:"); ok {
			f.loadPath(file, dir, "path:", rest)
		}
	}
}

// miseValueEnd is the line where a value begun at line i ends: i when it ends there (done),
// else the first later line for which ends says so, or the last line. Each line is looked at
// once: joining the lines so far and judging the whole again after each was O(lines²) (review41
// #7: a 50 KB mise.toml whose `_.file = [` never closes held a commit 86 s). A TOML string
// does not span lines here (bracketDepth's strings stop at one), so a value's depth is the sum
// of its lines'.
func miseValueEnd(lines []string, i int, ends func(line string) bool, done bool) int {
	for j := i; !done && j+1 < len(lines); {
		j++
		if mutated("workspace-mise-value-quadratic") {
			_ = bracketDepth(strings.Join(lines[i:j+1], "\n")) // the old cost: the value so far judged again
		}
		if done = ends(lines[j]); done || j+1 == len(lines) {
			return j
		}
	}
	return i
}

// bracketDepth is how many [ and { the TOML value v leaves open (strings skipped).
func bracketDepth(v string) int {
	d, comment := 0, false
	for _, c := range tomlString().ReplaceAllString(v, `""`) {
		if comment && c != '\n' {
			continue
		}
		switch c {
		case '[', '{':
			d++
		case ']', '}':
			d--
		case '#':
			comment = true
		case '\n':
			comment = false
		}
	}
	return d
}

// rcPrefixMatch says which .envrc or mise config loads rel (from the root) by a name prefix, "" when none does.
func (g *gitGuard) rcPrefixMatch(rel string) string {
	return g.prefixMatch(g.rcPrefix, rel, func(by string) string {
		return "a file the protected " + by +
			" loads at a cd into its directory (direnv's or mise's loads: there or not): shell code or variables the user's shell then runs"
	})
}
