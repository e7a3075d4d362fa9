package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// What a protected config starts is more than the file it names (attack round 16b): the
// program loads other files of the workspace (./tools/server.js requires ./lib/util.js; a
// server.py beside a json.py the call writes imports that instead of the standard library's),
// `python -m pkg.server` names a package, `npm run serve` runs a package.json script, `uv run`
// builds the project from its pyproject.toml, `make` obeys the Makefile, and a program the
// config names that is not there yet is made by the call's write. A rewrite of any of them runs
// on the host at the client's next start, as the named file's did. The follower finds them, on
// the text (fail closed: a word that reads as such protects, whether or not the tool would
// follow it), bounded.

// The follower's bounds, each failing closed (attack rounds atk37 F1, atk37b F1): past any, what
// the programs it did not read may load is refused (runCut, the bound named). maxProgramReads
// bounds the files it reads (a file that is not there is no read), maxRun the paths it protects,
// maxProgramFile the bytes read of one file (a config or a program: a bundle passes 256 KiB)
// and maxProgramBytes those of all, maxProgramDepth the hops from a config to what it loads
// (compiled TypeScript runs 7 deep and more; the reads bound is the one a real project meets).
var (
	maxProgramReads = 1024     // a variable for the tests
	maxRun          = 32768    // a variable for the tests
	maxProgramFile  = 8 << 20  // a variable for the tests
	maxProgramBytes = 64 << 20 // a variable for the tests
)

// maxProgramDepth bounds the hops from a config to what it loads.
const maxProgramDepth = 32

type follower struct {
	g     *gitGuard
	seen  map[string]bool // files read
	reads int
	bytes int               // read, of maxProgramBytes
	bare  map[string]string // bare specifiers looked up, by directory: the linked package
	todo  []todoFile
	// inRun is g.run as a set: a bundle's millions of requires each looked up in a list of
	// 32768 paths held a commit for minutes (the worst case, measured: atk38b F5)
	inRun  map[string]bool
	jsBase *jsBases            // the JS program being read's assignments (jsbase_linux.go)
	scopes map[string]*jsScope // a directory's package scope
	named  map[string]bool     // JS specifiers but relative ones resolved, by directory
	tsconf map[string]*tsConf  // a directory's nearest tsconfig.json (nil: none)
	// tsconfig "paths" apply to every JS program (a runner that applies them is named), the
	// programs judged before that, and the work of matching patterns (tsconfig_linux.go)
	tsOn      bool
	tsPending []tsLater
	tsCost    int
	// mapWork counts the steps of matching names against package.json maps' `*` keys, of
	// maxMapWork
	mapWork int
	// markers says which directories hold a package marker (programDir)
	markers map[string]bool
	// litSeen are the string literals literalPaths judged, by directory; literals counts them
	litSeen  map[string]map[string]bool
	literals int
	// litScan counts the bytes scanned for closing quotes not found (maxLiteralScan)
	litScan int
	// rcSourced are the files an .envrc or mise config sources, by it: read as its shell does
	rcSourced map[string]string
	// litOnly are the files queued only as a program's string literal names them (inLit: while
	// literalPaths judges them), read only when they are programs (litqueue_linux.go); cur is the
	// file being read
	litOnly map[string]bool
	inLit   bool
	cur     string
	// narrow is the directory a loader variable's value the reader cannot resolve fails closed
	// on while a config's env or a script's export is judged (loaderEnv); "" elsewhere
	narrow string
	// appEnv are the app servers' option words the variables a config sets for what it starts
	// stand for (UVICORN_APP_DIR=srv: --app-dir srv), by the config (appconfig_linux.go)
	appEnv map[string][]string
	// appConf are the app servers' config files at the workspace's root (gunicorn.conf.py):
	// read as programs, but a settings file's place is not its package (appconfig_linux.go)
	appConf map[string]bool
	// setters are the names protected texts may set for what they start, by the file (""
	// when several); settersFull: past the bound; envUnknown: files started after their
	// starter loaded names unseen; defaulted: started scripts' walks that took defaults
	// (startenv_linux.go)
	setters     map[string]string
	settersFull bool
	exportAll   bool // a shell was started with allexport on (setternames_linux.go)
	envUnknown  map[string]bool
	defaulted   []defaultTaken
	// runAs are the files a runtime runs as its program, and how (runas_linux.go)
	runAs map[string][]runSpec
	// lines are the config strings read as command lines (configshell_linux.go)
	lines configLineSeen
	// lefthookRoots are the roots whose lefthook configs were read (lefthook_linux.go)
	lefthookRoots map[string]bool
	// stmts: the words judged are one statement's, its program first (config lines', dirWord)
	stmts bool
	// lefthookDocs are the lefthook configs read, by path (the words reader skips their roots)
	lefthookDocs map[string]map[string]any
}

type todoFile struct {
	path, by string
	depth    int
}

// dirFlags are the options that move where the following words are taken from (uv --directory,
// npm --prefix, make -C, bun --cwd), wrapperDirs a wrapper's (watchexec --workdir, parallel
// --wd, sudo --chdir, systemd-run --working-directory: atk48a F8's class).
var (
	dirFlags    = map[string]bool{"--directory": true, "--cwd": true, "-C": true, "--prefix": true, "--project": true, "--dir": true}
	wrapperDirs = map[string]bool{"--workdir": true, "--wd": true, "--chdir": true, "--working-directory": true}
)

// dirFlag: the option w moves where the following words are taken from.
func dirFlag(w string) bool {
	return dirFlags[w] || wrapperDirs[w] && !mutated("workspace-config-wrapper-dirs")
}

// pathAdd are direnv's words that put the directory after them on PATH.
var pathAdd = map[string]bool{"PATH_add": true, "path_add": true}

// scriptExts are the extensions of files a word names as a program even before it exists.
var scriptExts = map[string]bool{".py": true, ".js": true, ".mjs": true, ".cjs": true, ".ts": true, ".mts": true, ".cts": true,
	".sh": true, ".bash": true, ".zsh": true, ".rb": true, ".pl": true, ".php": true, ".lua": true, ".jar": true}

// add protects p (a path; a directory protects what is below it), named through by.
func (f *follower) add(p, by string) bool {
	g := f.g
	if !strings.HasPrefix(p, g.ws+"/") {
		// the workspace named another way (its real path, or through a link to it): the
		// client names the project as it knows it
		if rp, _ := g.resolveAbs(p); !strings.HasPrefix(rp, g.wsReal+"/") || mutated("workspace-config-programs-follow") {
			return false
		}
	}
	if f.inRun[p] {
		return false
	}
	if len(g.run) >= maxRun {
		if g.runCut == "" && !mutated("workspace-runs-cut-open") {
			g.runCut = fmt.Sprintf("more than %d paths (past it at what %s names)", maxRun, f.cutBy(by))
		}
		return false
	}
	g.run = append(g.run, p)
	g.runBy[p] = by
	if f.inRun == nil {
		f.inRun = map[string]bool{}
	}
	f.inRun[p] = true
	return true
}

// words judges the words of a command line (or of a whole config) from the directory dir.
func (f *follower) words(by, dir string, words []string, depth int) {
	if depth > maxProgramDepth {
		return
	}
	words = splitJoined(words) // --import=./x.mjs: the option and its value (atk42 F2)
	// env -S 'python3\_app/main.py': the words env runs, as it splits them (atk45a F6)
	words = append(words, envSplitWords(words)...)
	f.tsWords(words)
	bases := []string{f.g.ws, dir}
	inApp := appArgs(words) // read before the trim below: where a command line ends
	raw := append([]string(nil), words...)
	for i := range words {
		// "$CLAUDE_PROJECT_DIR"/x: ./x, as the shell joins it (atk45a F1). A second layer since
		// atk46a F1: a string with shell syntax is also read whole by the shell-line reader
		// (configLines), which alone holds the attack, so switching this off is caught by no test
		// (the mutant workspace-config-word-quotes survived CI 46a and was retired).
		words[i] = configWord(words[i])
		if i > 0 && dirFlag(words[i-1]) && !mutated("workspace-config-programs-follow") {
			// where the words are taken from: the whole line's (`uv --directory sub run main.py`)
			if d := f.g.wsSpelled(absFrom(dir, words[i])); strings.HasPrefix(d, f.g.ws+"/") && !slices.Contains(bases, d) {
				bases = append(bases, d)
			}
		}
		if i > 0 && words[i-1] == "cwd" && !mutated("protect-agents-atk37") {
			// a config's "cwd" key (Copilot's hooks: from the repository's root; an MCP
			// server's): its commands run from there
			for _, d := range []string{f.g.wsSpelled(absFrom(f.g.ws, words[i])), f.g.wsSpelled(absFrom(dir, words[i]))} {
				if strings.HasPrefix(d, f.g.ws+"/") && !slices.Contains(bases, d) {
					bases = append(bases, d)
				}
			}
		}
	}
	bases = f.envBases(dir, words, bases)                              // env --chdir server, -iC server (atk46a F2)
	words, inApp = f.withAppExtra(by, bases, words, raw, inApp, depth) // UVICORN_APP_DIR=srv, gunicorn.conf.py (atk45a F8)
	appBases := f.appBases(bases, words, inApp)
	stats := wordStats{}
	scripts := runScripts(words) // the files a runtime runs: its programs whatever their names (atk45a F5)
	for i, word := range words {
		if word == "" || strings.HasPrefix(word, "~") || strings.Contains(word, "://") || strings.ContainsAny(word, "*?[{$") {
			continue
		}
		if i > 0 && pathAdd[words[i-1]] && !mutated("workspace-config-programs-follow") {
			// a directory put on the host's PATH: every program in it runs for a bare name
			if d := f.g.wsSpelled(absFrom(dir, word)); d != f.g.ws {
				f.add(d, by)
			}
			continue
		}
		prev := ""
		if i > 0 {
			prev = words[i-1]
		}
		if envFileOpts[prev] {
			f.envFile(by, bases, word, depth) // node --env-file=.env: its NODE_OPTIONS apply
			continue
		}
		if mod, ok := pyModuleArg(prev, word); ok && !mutated("workspace-config-programs-follow") {
			for _, b := range bases {
				f.module(by, b, mod, depth)
			}
			continue
		}
		if s, ok := pyAppSpec(prev, word, inApp != nil && inApp[i]); ok && !mutated("workspace-follow-app-spec") {
			if s.mod != "" {
				for _, b := range appBases {
					f.appModule(by, f.g.wsSpelled(absFrom(b, s.sub)), s.mod, depth)
				}
				continue
			}
			word = s.file // `file.py:object`: the file, judged below as a path
		}
		if !mutated("workspace-config-programs-follow") {
			f.tool(by, bases, filepath.Base(word), depth)
		}
		for _, b := range bases {
			p, st, err := stats.of(f.g, b, word)
			switch {
			case err == nil && st.Mode().IsRegular():
				f.venv(p, by)
				f.runAsFile(p, by, runSpec{scripts[i], ""}, depth+1)
				if f.add(p, by) {
					f.queue(p, by, depth+1)
				} else {
					f.requeue(p, by, depth+1)
				}
			case err == nil && st.IsDir() && !strings.HasPrefix(word, "-") && !(i > 0 && (dirFlag(words[i-1]) || words[i-1] == "cwd")):
				f.dirWord(by, p, words, i, depth) // a program named by its directory runs its entry
			case err != nil && !mutated("workspace-config-programs-follow") && !strings.HasPrefix(word, "-") &&
				(scriptExts[filepath.Ext(word)] || strings.HasPrefix(word, "./") || strings.HasPrefix(word, "../") || scripts[i] != "" && strings.Contains(word, "/")):
				f.add(p, by) // not there yet: the call's write would make it
			}
		}
	}
}

// wordStats are the files a command line's words name from a base, each looked up once: a
// config's values repeat a word as often as they like (`args: [a,a,…]`, 120,000 times in 240
// KiB), and an os.Stat of each was half a commit's time beside large configs (atk45a F10).
type wordStats map[[2]string]wordStat

type wordStat struct {
	p   string
	st  os.FileInfo
	err error
}

// statFile is os.Stat (the tests count its calls).
var statFile = os.Stat

// of is the path word names from base b (the workspace's other spelling names the same place)
// and its os.Stat.
func (s wordStats) of(g *gitGuard, b, word string) (string, os.FileInfo, error) {
	k := [2]string{b, word}
	if w, ok := s[k]; ok && !mutated("workspace-words-stat-once") {
		return w.p, w.st, w.err
	}
	p := g.wsSpelled(absFrom(b, word))
	st, err := statFile(p)
	s[k] = wordStat{p, st, err}
	return p, st, err
}

// venv protects the virtual environment a program the config names lies in (venv/bin/python):
// its site-packages' .pth files and packages run at the interpreter's start, and only .venv
// is on the protect list (atk38b F5's class).
func (f *follower) venv(p, by string) {
	if mutated("workspace-follow-venv") {
		return
	}
	for d := filepath.Dir(p); strings.HasPrefix(d, f.g.ws+"/"); d = filepath.Dir(d) {
		if regular(filepath.Join(d, "pyvenv.cfg")) {
			f.add(d, by)
			return
		}
	}
}

// tool protects the project files a tool the command line names obeys in each base.
func (f *follower) tool(by string, bases []string, name string, depth int) {
	var files []string
	switch name {
	case "npm", "pnpm", "yarn", "bun", "corepack", "lint-staged", "nano-staged", "commitlint", "simple-git-hooks", "npx", "bunx":
		// their commands (lint-staged's, a hook's) may be package.json's keys
		files = []string{"package.json", ".npmrc", ".yarnrc.yml", "bunfig.toml"}
	case "uv", "poetry", "pipenv", "hatch", "pdm", "rye", "pip", "pip3", "uvx", "pipx": // uvx --from ., pipx run --spec .
		files = []string{"pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "uv.toml"}
	case "make", "gmake":
		files = []string{"Makefile", "makefile", "GNUmakefile"}
	case "just":
		files = []string{"justfile", "Justfile", ".justfile"}
	case "task":
		files = []string{"Taskfile.yml", "Taskfile.yaml"}
	default:
		return
	}
	for _, b := range bases {
		for _, n := range files {
			p := filepath.Join(b, n)
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() || !f.add(p, by) {
				continue
			}
			f.todo = append(f.todo, todoFile{p, by, depth + 1})
		}
	}
}

// module protects what `python -m a.b.c` run from base loads first: the package a (a
// directory, whole) or the module a.py, there or not; and reads the module it runs (a/b/c.py,
// a/b/c/__main__.py, a.py) as a program: what it loads outside its package, and a module at the
// workspace's root is a program there (atk40b F1).
func (f *follower) module(by, base, mod string, depth int) {
	top, _, _ := strings.Cut(mod, ".")
	if !pyIdent().MatchString(top) {
		return
	}
	f.add(filepath.Join(base, top), by)
	f.add(filepath.Join(base, top+".py"), by)
	f.pyShadows(by, base, top)
	if mutated("workspace-follow-program-dir-whole") {
		return
	}
	p := filepath.Join(base, filepath.FromSlash(strings.ReplaceAll(mod, ".", "/")))
	for _, q := range []string{p + ".py", filepath.Join(p, "__main__.py"), filepath.Join(p, "__init__.py")} {
		if strings.HasPrefix(q, f.g.ws+"/") && regular(q) {
			f.todo = append(f.todo, todoFile{q, by, depth + 1})
		}
	}
}

var (
	pyIdent  = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*$`)
	pyImport = lazy.Regexp(`(?m)(?:^|:)[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import|import[ \t]+([A-Za-z_][\w., \t]*))`)
	// at a line's start only: the mutant's (atk43 F5: `if 1: import srv.main` was not read)
	pyImportLineStart = lazy.Regexp(`(?m)^[ \t]*(?:from[ \t]+(\.*)([A-Za-z_][\w.]*)?[ \t]+import|import[ \t]+([A-Za-z_][\w., \t]*))`)
	pyScriptRef       = lazy.Regexp(`(?m)^\s*[\w.-]+\s*=\s*"([A-Za-z_][\w.]*)(?::[\w.]+)?"`)
)

var jsExts = []string{"", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts", ".jsx", ".tsx", ".json", ".node"}

// follow reads what the protected programs load, as its kind says, breadth first, bounded.
func (f *follower) follow() {
	if mutated("workspace-config-programs-follow") {
		return
	}
	defer func() {
		// files left unread may load any path: not judged
		for _, t := range f.todo {
			if f.g.runCut != "" || f.seen[t.path] || !regular(t.path) {
				continue
			}
			if t.depth > maxProgramDepth {
				f.depthCut()
			} else if !mutated("workspace-runs-cut-open") {
				f.g.runCut = fmt.Sprintf("programs that load more than %d files", maxProgramReads)
			}
		}
	}()
	// past a bound (runCut) every change not judged is refused: what more the rest would
	// protect changes only the reason named, and reading it is the follower's worst case
	for len(f.todo) > 0 && f.reads < maxProgramReads && f.g.runCut == "" {
		t := f.todo[0]
		f.todo = f.todo[1:]
		t.path = f.g.wsSpelled(t.path) // an absolute path of the workspace's other spelling: the same file
		if f.seen[t.path] {
			continue
		}
		if t.depth > maxProgramDepth {
			if regular(t.path) { // a file there, unread: what it loads is not judged
				f.depthCut()
			}
			continue
		}
		f.seen[t.path] = true
		if f.litHead(t) {
			continue // data a program's literal names: protected, not read as words
		}
		limit := min(maxProgramFile, maxProgramBytes-f.bytes)
		b, cut, err := readSmall(t.path, limit)
		if err != nil {
			// not there (most of a require's extensions), or not a regular file; a directory
			// loads its entry
			if st, e := os.Stat(t.path); e == nil && st.IsDir() && !mutated("workspace-follow-dir-main") {
				f.dirEntry(t)
			}
			continue
		}
		f.reads++
		f.bytes += len(b)
		if cut && f.g.runCut == "" {
			// a require past the part read is not seen (a bundle ending in require('./late.js'))
			if limit == maxProgramFile {
				f.g.runCut = fmt.Sprintf("a program longer than %d KiB", maxProgramFile>>10)
			} else {
				f.g.runCut = fmt.Sprintf("programs of more than %d KiB in all", maxProgramBytes>>10)
			}
		}
		text := string(b)
		dir := filepath.Dir(t.path)
		base := filepath.Base(t.path)
		f.cur = t.path
		rdir := f.programAt(t, dir, text)
		f.readRunAs(t, rdir, text)
		switch ext := filepath.Ext(t.path); {
		case base == "package.json":
			// every string: scripts, main and bin, lint-staged's and simple-git-hooks' commands
			f.noteSetters(t.path, text) // "start": "APP_DIR=lib bash run.sh"
			var words []string
			for _, m := range quoted().FindAllStringSubmatch(text, -1) {
				words = append(words, strings.Fields(m[1])...)
			}
			f.words(t.by, dir, words, t.depth)
		case base == "pyproject.toml" || base == "setup.cfg":
			for _, m := range pyScriptRef().FindAllStringSubmatch(text, -1) {
				f.module(t.by, dir, m[1], t.depth)
				f.module(t.by, filepath.Join(dir, "src"), m[1], t.depth)
			}
		case ext == ".py" || shebang(text, "python"):
			f.pyImports(t, rdir, text)
		case slices.Contains(jsExts[1:], ext) && ext != ".json" && ext != ".node" || shebang(text, "node") || shebang(text, "deno") || shebang(text, "bun"):
			f.jsProgram(t, rdir, text)
		default: // a shell script, a Makefile, a justfile: every word may name a program
			f.noteSetters(t.path, text) // the names it may set for what it starts
			f.words(t.by, dir, strings.Fields(text), t.depth)
			f.shellProgram(t, dir, text)
			f.rcSourcedText(t, text)
		}
	}
}

// jsProgram reads the JS program t (text; rdir the directory node runs it from) for what it loads.
func (f *follower) jsProgram(t todoFile, rdir, text string) {
	f.scope(t.by, rdir) // its package.json steers what it loads, there or not
	f.tsScope(t, rdir)  // and its tsconfig.json, under a runner that applies it
	done := map[jsRef]bool{}
	f.jsBase = &jsBases{text: text}
	jsRefs(text, func(r jsRef) bool {
		if !done[r] {
			done[r] = true
			f.jsResolve(t, rdir, r)
		}
		return f.g.runCut == "" // past a bound, the rest is not judged anyway
	})
	f.jsBase = nil
}

// pyImports protects what a Python file's imports may load from the workspace: for `import a.b`
// and `from a import b` the module or package a beside the file and at the root (sys.path[0] is
// the script's directory, or the working directory for -m), there or not (a json.py the call
// writes beside server.py shadows the standard library's); for `from .x import y` the file's
// own package.
func (f *follower) pyImports(t todoFile, dir, text string) {
	f.pyDynamic(t, dir, text)
	f.pyLoaders(t, dir, text)
	f.djangoNames(t, dir, text) // INSTALLED_APPS = ['polls']: modules Django imports (atk45a F8)
	imports := text
	if !mutated("workspace-follow-py-semicolon") {
		imports = strings.ReplaceAll(text, ";", "\n") // `import os; import srv.main`: a statement list
	}
	if !mutated("workspace-py-continuation") {
		// a backslash joins a line to the next (`import os, \⏎ srv.main`: atk44a F9)
		imports = strings.NewReplacer("\\\r\n", " ", "\\\n", " ").Replace(imports)
	}
	re := pyImport() // also after a compound statement's colon: `if 1: import srv.main`, `try: import x`
	if mutated("workspace-follow-py-compound") {
		re = pyImportLineStart()
	}
	for _, m := range re.FindAllStringSubmatch(imports, -1) {
		var tops []string
		switch {
		case m[1] != "": // relative: the package the file is in (its directory), and up
			d := dir
			for range len(m[1]) - 1 {
				d = filepath.Dir(d)
			}
			if d != f.g.ws && f.add(d, t.by) {
				continue
			}
			if m[2] != "" {
				top, _, _ := strings.Cut(m[2], ".")
				f.pyModule(t, d, top)
			}
			continue
		case m[2] != "":
			tops = []string{m[2]}
		default:
			for _, part := range strings.Split(m[3], ",") {
				if fs := strings.Fields(part); len(fs) > 0 {
					tops = append(tops, fs[0])
				}
			}
		}
		for _, mod := range tops {
			top, _, _ := strings.Cut(mod, ".")
			if !pyIdent().MatchString(top) {
				continue
			}
			for _, b := range []string{dir, f.g.ws} {
				f.pyModule(t, b, top)
			}
		}
	}
}

// linkedPackage protects the workspace's package a bare specifier (require('@org/util')) loads
// through a link in node_modules (a pnpm, yarn or npm workspace links node_modules/@org/util
// to ../../packages/util): node looks in each node_modules from the file's directory up, and
// the first that holds the name is the one it loads. node_modules itself is protected; the
// package it links to was not, and the host's program ran a call's rewrite of it. The whole
// package is protected, and the file the specifier names in it read (what it loads outside
// the package, ../../shared/x.js, is followed): the package's directory, "" when none.
func (f *follower) linkedPackage(by, dir, name string) string {
	key := dir + "\x00" + name
	if pkg, ok := f.bare[key]; ok {
		return pkg // looked up from this directory already (a bundle names a package many times)
	}
	if f.bare == nil {
		f.bare = map[string]string{}
	}
	if len(f.bare) >= maxRun {
		// each is a look-up in each node_modules up: bounded as the paths are
		if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
			f.g.runCut = fmt.Sprintf("programs that name more than %d packages", maxRun)
		}
		return ""
	}
	pkg := f.linkedLookup(by, dir, name)
	f.bare[key] = pkg
	return pkg
}

// linkedLookup is linkedPackage's look-up in each node_modules from dir up.
func (f *follower) linkedLookup(by, dir, name string) string {
	for d := dir; strings.HasPrefix(d+"/", f.g.ws+"/"); d = filepath.Dir(d) {
		p := filepath.Join(d, "node_modules", name)
		st, err := os.Lstat(p)
		if err != nil {
			if d == f.g.ws {
				return ""
			}
			continue
		}
		if st.Mode()&os.ModeSymlink == 0 {
			return "" // installed there: node_modules is protected
		}
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			return ""
		}
		for _, root := range []string{f.g.wsReal, f.g.ws} {
			if rest, ok := strings.CutPrefix(r, root+"/"); ok && !slices.Contains(strings.Split(rest, "/"), "node_modules") {
				pkg := filepath.Join(f.g.ws, rest)
				f.add(pkg, by)
				return pkg
			}
		}
		return ""
	}
	return ""
}

// depthCut: a file more than maxProgramDepth hops from its config is there and was not read.
func (f *follower) depthCut() {
	if f.g.runCut == "" && !mutated("workspace-follow-depth-open") {
		f.g.runCut = fmt.Sprintf("programs that load files more than %d hops away", maxProgramDepth)
	}
}

// regular: p is a regular file (a link to one counts: the program opens it so).
func regular(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// shebang: the text's #! line names prog.
func shebang(text, prog string) bool {
	line, _, _ := strings.Cut(text, "\n")
	return strings.HasPrefix(line, "#!") && strings.Contains(line, prog)
}

// A program a protected config starts loads files by more routes than any list of loaders
// names (attack round atk40b, F1: Python's subprocess of a workspace script, os.system,
// pickle, ctypes, code, timeit, cProfile; JS's module[k](…), a computed property name,
// .constructor.constructor(string), WebAssembly: 12 of 12 were neither resolved nor a
// mention, and the host's next start ran a call's rewrite of what they loaded). The default is
// now the other way round: every program the follower reads has its package protected whole,
// the directory from the program up to its package root (the nearest package.json,
// pyproject.toml, setup.py, setup.cfg, go.mod, Cargo.toml …, below the workspace's root and
// never above the config's own directory; none: the program's own directory). The precise
// resolution stays for what lies outside it (../lib/util.js, a linked workspace package).
// A program at the workspace's root has the whole workspace as its package: it is not
// protected whole (no change could be applied), and not left a hole either: every change no
// other rule judges is refused (runRoot), the reason saying to move the program into a
// directory of its own. A root package.json or pyproject.toml does not make the root a
// program's package (dist/index.js of a root package.json protects dist/): the project's
// sources, tests and docs beside it stay the call's to edit.

// programDirsWhole is the default above: a variable for the tests, which judge the precise
// resolution alone (it is what still protects what a program loads outside its package).
var programDirsWhole = true

// packageMarkers are the files that make a directory a package root.
var packageMarkers = []string{"package.json", "pyproject.toml", "setup.py", "setup.cfg", "go.mod", "Cargo.toml", "deno.json",
	"deno.jsonc", "Gemfile", "composer.json", "pom.xml", "build.gradle", "build.gradle.kts"}

// program: the file at p with text is a program the host runs (code, a script or a native
// executable), not data or a project file (package.json, a Makefile) the follower reads for
// the words it names.
func program(p, text string) bool {
	ext := filepath.Ext(p)
	return ext == ".py" || ext == ".pyw" || slices.Contains(jsExts[1:], ext) && ext != ".json" ||
		scriptExts[ext] || strings.HasPrefix(text, "#!") || strings.HasPrefix(text, "\x7fELF")
}

// programDir protects the package of the program t (in dir) whole; at the workspace's root,
// leaves every change no other rule judges unapplied (runRoot).
func (f *follower) programDir(t todoFile, dir string) {
	if !programDirsWhole || mutated("workspace-follow-program-dir-whole") {
		return
	}
	ws := f.g.ws
	dir = f.g.wsSpelled(dir) // the workspace's real path names the same package (atk41 F9)
	if dir != ws && !strings.HasPrefix(dir, ws+"/") {
		return // outside the workspace (a program named by its absolute path elsewhere)
	}
	stop := ws
	if cd := filepath.Dir(t.by); cd != ws && strings.HasPrefix(dir+"/", cd+"/") {
		stop = cd // never above the config's own directory
	}
	pkg := dir
	for d := dir; d != stop && strings.HasPrefix(d, stop+"/"); d = filepath.Dir(d) {
		if f.marked(d) {
			pkg = d
			break
		}
	}
	if pkg != ws {
		f.add(pkg, t.by)
		return
	}
	if f.appConf[t.path] && !mutated("workspace-follow-app-config-root") {
		return // gunicorn.conf.py: what it places and imports is read; the root is not its package
	}
	if f.g.runRoot == "" {
		rel, _ := filepath.Rel(ws, t.path)
		by, _ := filepath.Rel(ws, t.by)
		f.g.runRoot = fmt.Sprintf("a program the protected file %s starts, %s, lies at the workspace's root: its package is the "+
			"whole workspace, any file of which it may load by a route the check does not resolve, so a change no other rule "+
			"judges is not applied; move the program into a directory of its own (server/, started as %s) or keep it out of "+
			"the workspace (named by its absolute path, or installed as a package)",
			strconv.Quote(filepath.ToSlash(by)), strconv.Quote(filepath.ToSlash(rel)), strconv.Quote(rootMove(rel)))
	}
}

// marked: the directory d holds a package marker (looked up once a directory: a thousand
// programs in one tree stat each level's markers once).
func (f *follower) marked(d string) bool {
	if m, ok := f.markers[d]; ok {
		return m
	}
	if f.markers == nil {
		f.markers = map[string]bool{}
	}
	m := slices.ContainsFunc(packageMarkers, func(m string) bool { return regular(filepath.Join(d, m)) })
	f.markers[d] = m
	return m
}

// rootMove is the command line that starts rel moved into server/.
func rootMove(rel string) string {
	switch filepath.Ext(rel) {
	case ".py":
		return "python3 server/" + rel
	case ".js", ".mjs", ".cjs":
		return "node server/" + rel
	}
	return "server/" + rel
}

// namePrefix is a name prefix protected in a directory: the names there starting with it.
type namePrefix struct {
	prefix string // folded
	by     string // the config, absolute
}

// pyModule protects what Python may load for the module top from the directory b (a sys.path
// entry), there or not, and reads what is there: the package top/, and every name the import
// system tries for it (pyShadows).
func (f *follower) pyModule(t todoFile, b, top string) {
	for _, e := range []string{"", ".py"} {
		p := filepath.Join(b, top+e)
		if f.add(p, t.by) {
			f.todo = append(f.todo, todoFile{p, t.by, t.depth + 1})
		}
	}
	f.pyShadows(t.by, b, top)
}

// pyShadows protects every name Python's FileFinder tries for the module top in dir, not only
// the one it resolved (atk40b F5: a protected helper.py left helper.cpython-311-x86_64-linux-
// gnu.so, helper.abi3.so and helper.so writable, extension modules tried BEFORE the source,
// and the host's next start imported a call's): the package directory top/ (a namespace
// package's portion too) and the names starting "top." (.so of every ABI and version, .pyd,
// .py, .pyc, .pyw), in dir and its __pycache__.
func (f *follower) pyShadows(by, dir, top string) {
	g := f.g
	dir = g.wsSpelled(dir)
	if mutated("workspace-follow-python-ext-shadow") || dir != g.ws && !strings.HasPrefix(dir, g.ws+"/") {
		return
	}
	if g.pyPrefix == nil {
		g.pyPrefix = map[string][]namePrefix{}
	}
	for _, d := range []string{dir, filepath.Join(dir, "__pycache__")} {
		key := fold(g.relOf(d))
		if slices.ContainsFunc(g.pyPrefix[key], func(p namePrefix) bool { return p.prefix == fold(top+".") }) {
			continue
		}
		if len(g.pyPrefix[key]) >= maxImporters {
			if g.runCut == "" && !mutated("workspace-runs-cut-open") {
				g.runCut = fmt.Sprintf("programs that import more than %d modules from one directory", maxImporters)
			}
			return
		}
		g.pyPrefix[key] = append(g.pyPrefix[key], namePrefix{fold(top + "."), by})
	}
}

// pyPrefixMatch says which config starts a program that may import rel (a path from the
// workspace's root) by a name Python tries for a module, "" when none does.
func (g *gitGuard) pyPrefixMatch(rel string) string {
	return g.prefixMatch(g.pyPrefix, rel, func(by string) string {
		return "a name Python tries for a module a program the protected file " + by +
			" starts imports (an extension module .so is tried before the .py): the host runs it"
	})
}

// A program loads what lies outside its package by routes no rule names too (pickle.load of
// open('data/model.pkl'), subprocess.run(['sh', '../scripts/setup.sh']), a native library by
// its path): every string literal of a program the follower reads is taken as words, as a
// shell script's are (fail closed: a path named so is protected whether or not the program
// loads it), from the program's directory and the workspace's root (where clients start
// servers): an existing file there protected and read, a script or ./ ../ path not there yet
// protected (atk40b F1's class, outside the package).
// literalPaths judges the words of the string literals of the program t (in dir) that may
// name a path (a "/" or a "." in them).
func (f *follower) literalPaths(t todoFile, dir, text string) {
	if mutated("workspace-follow-program-literals") {
		return
	}
	if f.litSeen == nil {
		f.litSeen = map[string]map[string]bool{}
	}
	seen := f.litSeen[dir]
	if seen == nil {
		seen = map[string]bool{}
		f.litSeen[dir] = seen
	}
	var words []string
	for at := 0; at < len(text); {
		lit, next, ok := f.nextLiteral(text, at)
		if !ok {
			if f.litScan > maxLiteralScan && f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
				f.g.runCut = fmt.Sprintf("programs whose quotes take more than %d MiB to scan", maxLiteralScan>>20)
			}
			break
		}
		at = next
		if !strings.Contains(lit, "/") {
			continue
		}
		for _, w := range strings.Fields(lit) {
			w = strings.Trim(w, `,;:()[]{}`)
			if strings.Contains(w, litMark) {
				if w = f.literalWord(t, dir, w); f.g.runCut != "" {
					return
				}
			}
			if seen[w] || !strings.Contains(w, "/") || strings.Contains(w, "://") || strings.Trim(w, "./") == "" {
				continue // "." and ".." name the package or above it whole: not words here
			}
			if f.literals >= maxLiteralPaths {
				// each is two look-ups: bounded, failing closed as the reads do
				if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
					f.g.runCut = fmt.Sprintf("programs whose strings name more than %d paths", maxLiteralPaths)
				}
				return
			}
			seen[w] = true
			f.literals++
			words = append(words, w)
		}
	}
	if len(words) > 0 {
		f.words(t.by, dir, words, t.depth)
	}
}

// maxLiteralPaths bounds the string literals with a "/" that literalPaths looks up (two
// look-ups each, by the commit's follower in all).
const maxLiteralPaths = 16384
