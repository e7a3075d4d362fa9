package wslayer

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
)

// A program is judged from where its runtime runs it, not from the path as the config spells it
// (attack round atk41, F8/F9/F11): Python puts the script's directory with its links followed on
// sys.path (node resolves its main module's links too), so `python3 bin/server.py` with
// bin/server.py -> ../srv/main.py imports srv/helper.py; a config that names the program by the
// workspace's other spelling (its real path, when a directory above it is a link) names the
// same package; and a program named by its directory (`node srv`, `python3 srv`, `npx ./srv`)
// runs that directory's entry.

// wsSpelled maps p (absolute) to the workspace's spelling: p when it is the workspace or below
// it as spelled; else, when p with its links followed lies in the workspace, that path rebased
// on g.ws; else p unchanged (outside the workspace).
func (g *gitGuard) wsSpelled(p string) string {
	if p == g.ws || strings.HasPrefix(p, g.ws+"/") || mutated("workspace-follow-other-spelling") {
		return p
	}
	rp, ok := g.resolveAbs(p)
	if !ok {
		return p
	}
	if rp == g.wsReal {
		return g.ws
	}
	if rest, ok := strings.CutPrefix(rp, g.wsReal+"/"); ok {
		return filepath.Join(g.ws, rest)
	}
	return p
}

// realInWs is p (in the workspace's spelling) with its links followed, in the workspace's
// spelling; "" when it leads out of the workspace or cannot be followed.
func (g *gitGuard) realInWs(p string) string {
	rp, ok := g.resolveAbs(p)
	if !ok {
		return ""
	}
	if rest, ok := strings.CutPrefix(rp, g.wsReal+"/"); ok {
		return filepath.Join(g.ws, rest)
	}
	return ""
}

// realDir is the directory the runtime runs the program t from: its file's with links followed
// (in the workspace), else the one it is named in. The target itself is protected too: a link's
// target is the file the host runs.
func (f *follower) realDir(t todoFile) string {
	dir := filepath.Dir(t.path)
	if mutated("workspace-follow-resolved-dir") {
		return dir
	}
	r := f.g.realInWs(t.path)
	if r == "" || r == t.path {
		return dir
	}
	f.add(r, t.by)
	return filepath.Dir(r)
}

// programAt protects the package of t (in dir), when it is a program, and judges its literals,
// from its own directory and its link's target's; it returns the directory the runtime runs it
// from (a link's target's: sys.path[0], node's main).
func (f *follower) programAt(t todoFile, dir, text string) string {
	rdir := f.realDir(t)
	if program(t.path, text) || len(f.runAs[t.path]) > 0 {
		for _, d := range uniq(dir, rdir) {
			f.programDir(t, d)
			f.literalsOf(t, d, text)
		}
	}
	return rdir
}

func uniq(a, b string) []string {
	if a == b {
		return []string{a}
	}
	return []string{a, b}
}

// dirRunners are the programs that run a directory named to them: its entry (package.json's
// main or bin, index.js, __main__.py, a pyproject's scripts).
var dirRunners = map[string]bool{"node": true, "nodejs": true, "deno": true, "bun": true, "bunx": true, "npx": true, "tsx": true,
	"ts-node": true, "python": true, "python3": true, "pypy": true, "pypy3": true, "uvx": true, "pipx": true, "uv": true,
	"pnpm": true, "yarn": true, "npm": true}

// runnerBefore: the word before words[i], past its options, names a program that runs a
// directory.
func runnerBefore(words []string, i int) bool {
	for j := i - 1; j >= 0; j-- {
		if strings.HasPrefix(words[j], "-") {
			continue
		}
		return runnerIn(words[j : j+1])
	}
	return false
}

// runnerIn: one of words names a program that runs a directory (python3.12 too).
func runnerIn(words []string) bool {
	for _, w := range words {
		b := filepath.Base(w)
		if dirRunners[b] || strings.HasPrefix(b, "python3.") {
			return true
		}
	}
	return false
}

// dirReaders are programs that read (check, format, list) the directories named to them and
// run none of their files, nor a config of theirs that is code; goReaders go's subcommands that do so.
var (
	dirReaders = map[string]bool{"echo": true, "printf": true, "ls": true, "wc": true, "du": true, "gofmt": true,
		"goimports": true, "ruff": true, "black": true, "shellcheck": true, "shfmt": true, "codespell": true}
	goReaders = map[string]bool{"vet": true, "fmt": true, "list": true}
)

// dirReader: the statement's words (its program first) are a reader's command line.
func dirReader(words []string) bool {
	if len(words) == 0 {
		return false
	}
	b := filepath.Base(words[0])
	return dirReaders[b] || b == "go" && len(words) > 1 && goReaders[words[1]]
}

// dirWord follows a word naming the directory d of the workspace (not its root): its entry as
// each runtime takes it (package.json's main and bin, index.*, __main__.py, __init__.py, a
// pyproject.toml's scripts), whose package is then protected whole as any program's; when no
// program among a config's words is one that runs a directory, the directory is protected whole
// (what runs it is not known); in a project file's words (package.json's, a Makefile's) only a
// directory right after such a program is followed.
func (f *follower) dirWord(by string, d string, words []string, i, depth int) {
	if mutated("workspace-follow-dir-entry") || f.inLit || d == f.g.ws || !strings.HasPrefix(d, f.g.ws+"/") {
		return // a directory a program's literal names is judged by what loads it (jsResolve, pyloader)
	}
	if depth > 0 && !runnerBefore(words, i) {
		// a project file's words (package.json's "files": ["src"]): a directory is run only
		// by a runner named just before it (a script's `node srv`)
		return
	}
	if f.stmts && dirReader(words) && !runnerIn(words) && !mutated("workspace-follow-dir-readers") {
		// a reader's operand (gofmt -l ., ruff check . from a lefthook root): read, never run
		// (atk49a F5: root: pyapp/ with ruff check . made pyapp/ read-only)
		return
	}
	f.todo = append(f.todo, todoFile{d, by, depth + 1}) // follow's dirEntry: main, index.*, __init__.py
	if !runnerIn(words) {
		f.add(d, by)
		return
	}
	for _, n := range []string{"__main__.py", "package.json", "pyproject.toml", "setup.cfg"} {
		if p := filepath.Join(d, n); regular(p) && f.add(p, by) {
			f.todo = append(f.todo, todoFile{p, by, depth + 1})
		}
	}
}

// pyNoArg are CPython's one-letter options that take no value: they may precede -m in one
// cluster (-Bm mod, -Im mod).
const pyNoArg = "bBdEhiIOPqRsSuvVx"

// pyModuleArg is the module a python command line's word names with -m as getopt reads it: in a
// cluster of options after any that take no value, joined (-msrv.main, -Bmsrv.main) or the next
// word (-m srv.main, -Bm srv.main); ok false when the word is not one.
func pyModuleArg(prev, word string) (string, bool) {
	if mod, ok := pyMCluster(word); ok && mod != "" && !mutated("workspace-follow-python-getopt") {
		return mod, true
	}
	if prev == "-m" {
		return word, true
	}
	if mod, ok := pyMCluster(prev); ok && mod == "" && !mutated("workspace-follow-python-getopt") {
		return word, true
	}
	return "", false
}

// pyMCluster: w is an option cluster holding -m; mod is what follows the m in it ("" when the
// module is the next word).
func pyMCluster(w string) (string, bool) {
	if len(w) < 2 || w[0] != '-' || w[1] == '-' {
		return "", false
	}
	for i := 1; i < len(w); i++ {
		switch {
		case w[i] == 'm':
			return w[i+1:], true
		case strings.IndexByte(pyNoArg, w[i]) < 0:
			return "", false // a value-taking option (-c, -W, -X) or not python's
		}
	}
	return "", false
}

// inlineOpts are the options after which a runtime takes its program's text inline: python's
// -c (bash's too, whose words are read anyway), node's, deno's and bun's -e, --eval, -p, --print.
var inlineOpts = map[string]bool{"-c": true, "-e": true, "--eval": true, "-p": true, "--print": true}

// configYAML is the YAML text of the config by (text): the whole of a .yaml, .yml or
// .lintstagedrc file, an agent's frontmatter; yaml is false for another format's.
func configYAML(by, text string) (string, bool) {
	if fm, ok := frontmatter(text); ok && strings.HasSuffix(by, ".agent.md") {
		return fm, true
	}
	return text, strings.HasSuffix(by, ".yaml") || strings.HasSuffix(by, ".yml") || filepath.Base(by) == ".lintstagedrc"
}

// configDecoded are the strings of the config by (its text) as its format's parser gives them
// (configValues): what the inline reader and the words reader read (atk44a F10). why says why
// they are not all of them (the callers fail closed).
func configDecoded(by, text string) (strs []string, why string) {
	text, yaml := configYAML(by, text)
	if mutated("workspace-follow-inline-decode") {
		for _, m := range quoted().FindAllStringSubmatch(text, -1) {
			strs = append(strs, strings.ReplaceAll(m[1], `\"`, `"`))
		}
		return strs, ""
	}
	return configValues(by, text, yaml)
}

// inlineCode reads the code a config (by, its strings decoded: configDecoded) gives a runtime
// inline (`python3 -c 'import srv.main'`, `node -e "require('./srv')"`, a hook's one command
// string `python3 -c '…'`) as a program run from the working directory (the workspace's root,
// where clients start servers, and the config's directory): Python's sys.path[0] for -c, node's
// base for -e. Its imports and requires are followed, its literals judged (atk41 F11). Each
// string is a word of a command line.
func (f *follower) inlineCode(by string, strs []string, why string) {
	if mutated("workspace-follow-inline-code") {
		return
	}
	dirs := uniq(f.g.ws, filepath.Dir(by))
	if why != "" {
		f.inlineCut(by, dirs, why)
	}
	for _, p := range inlineOf(strs) {
		f.runInline(by, dirs, p, 0)
	}
	if mutated("workspace-follow-inline-getopt") {
		return
	}
	for _, s := range strs {
		if !strings.ContainsAny(s, " \t\n") {
			continue
		}
		// a string that is a command line (a hook's command): its statements as bash reads them,
		// its heredocs' bodies apart (atk47a F1: an apostrophe in one swallowed the rest), each a
		// runtime's standard input (`python3 - <<'EOF'`) and read as statements too (`| sh`)
		text, docs := lineHeredocs(s)
		stmts := shellStatements(text)
		for _, m := range slices.Sorted(maps.Keys(docs)) {
			stmts = append(stmts, shellStatements(strings.TrimPrefix(docs[m], heredocExpand))...)
		}
		for _, words := range stmts {
			progs, why := stmtInline(words, docs)
			if why != "" {
				f.inlineCut(by, dirs, why)
			}
			for _, p := range progs {
				f.runInline(by, dirs, p, 0)
			}
		}
	}
}
