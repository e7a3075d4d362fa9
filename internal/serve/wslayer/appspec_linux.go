package wslayer

import (
	"path/filepath"
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Python's app servers and MCP CLIs name the program they import as `module:attribute` or
// `file.py:object` (attack round atk42, F8): `uvicorn srv.main:app`, `gunicorn srv.main:app`,
// `fastmcp run srv/main.py:mcp` (FastMCP's documented form), `mcp run server.py:app` (the MCP
// SDK's CLI), a factory `srv.main:create_app()`, and a module-taking option's value (`flask
// --app srv.main`, `celery -A proj`). Read as spelled, neither names a file nor a -m module,
// and the host's next start imported a call's rewrite of srv/main.py. Every word is read so,
// not only after the tools known to take one: a command line is judged as the program it
// starts reads it.

// moduleOpts are the options whose value names a module (or a file) to import: flask's and
// celery's --app/-A, django's --settings, gunicorn's --worker-class, uvicorn's --factory (a
// flag: the spec after it is read anyway; taken so that a spec after it is never missed).
var moduleOpts = map[string]bool{"--app": true, "-A": true, "--settings": true, "--worker-class": true, "--factory": true}

var (
	pyDotted = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$`)
	// an attribute, a dotted one, or a factory call whose parentheses the word's trim left open
	pyAttr = lazy.Regexp(`^[A-Za-z_][A-Za-z0-9_.]*(?:\(.*)?$`)
)

// appSpec is what a word names as an app spec: the module mod in the directory sub (relative to
// each base; "" for the base itself), or the file file.
type appSpec struct {
	sub, mod, file string
}

// pyAppSpec reads the word (after prev) as Python's app servers read their app argument: a
// `:attribute` suffix stripped, what is left is a file when it holds a "/" or ends in .py
// (flask's `--app src/hello` is the module hello in src), else a dotted module. ok when the
// word is such a spec: a word with a ":" and an attribute after it, a module-taking option's
// value, or (tool: the word is after an app server's name) a dotted name without a colon.
func pyAppSpec(prev, word string, tool bool) (appSpec, bool) {
	if word == "" || strings.HasPrefix(word, "-") {
		return appSpec{}, false
	}
	left, attr, colon := strings.Cut(word, ":")
	if !colon && tool && !moduleOpts[prev] {
		if !pyDotted().MatchString(left) || notModule[strings.ToLower(filepath.Ext(left))] {
			return appSpec{}, false // a path, a number, a file's name: judged as any word
		}
		return appSpec{mod: left}, true
	}
	if colon && !pyAttr().MatchString(attr) || !colon && !moduleOpts[prev] || left == "" {
		return appSpec{}, false
	}
	if strings.HasSuffix(left, ".py") {
		return appSpec{file: left}, true
	}
	if i := strings.LastIndexByte(left, '/'); i >= 0 {
		if !pyIdent().MatchString(left[i+1:]) {
			return appSpec{file: left}, true // a path to judge as one (a directory, a link)
		}
		return appSpec{sub: left[:i], mod: left[i+1:]}, true
	}
	if !pyDotted().MatchString(left) {
		return appSpec{}, false // not a name Python imports (a host:port, an image:tag)
	}
	return appSpec{mod: left}, true
}

// notModule are the extensions of a dotted word among an app server's arguments that name a
// file or a host, not a module (`-r requirements.txt`, `--log-config log.yaml`, a .py file:
// judged as a path word).
var notModule = map[string]bool{".py": true, ".pyw": true, ".txt": true, ".md": true, ".rst": true, ".json": true, ".yaml": true,
	".yml": true, ".toml": true, ".cfg": true, ".ini": true, ".conf": true, ".log": true, ".lock": true, ".env": true, ".sh": true,
	".js": true, ".ts": true, ".html": true, ".css": true, ".csv": true, ".xml": true, ".pid": true, ".sock": true, ".pem": true,
	".key": true, ".crt": true, ".db": true, ".sqlite": true, ".gz": true, ".zip": true, ".whl": true, ".com": true, ".org": true, ".net": true}

// appTools are the programs that import a module their arguments name without a colon
// (atk42 F8's leftover): `gunicorn srv.main` (attribute application), `hypercorn srv.main`
// (app), `dramatiq srv.main` (its actors), `arq srv.main.WorkerSettings` (a class: the walk
// protects the modules on its way), `rq worker -c settings`, `gunicorn -k srv.workers.W`. After
// one, every dotted word is read as a module, narrowly (the names Python tries for it): an
// option's value such as `--log-level info` protects info.py, info/__init__.py, not a directory.
var appTools = map[string]bool{"uvicorn": true, "gunicorn": true, "hypercorn": true, "daphne": true, "granian": true,
	"dramatiq": true, "arq": true, "rq": true, "waitress-serve": true, "huey_consumer": true, "huey_consumer.py": true,
	"taskiq": true, "saq": true, "celery": true, "faust": true}

// appDirOpts are the app servers' options placing the modules they import elsewhere: uvicorn's
// --app-dir, gunicorn's --chdir and --pythonpath (a comma-separated list), celery's --workdir,
// dramatiq's and rq's --path.
var appDirOpts = map[string]bool{"--app-dir": true, "--chdir": true, "--pythonpath": true, "--workdir": true, "--path": true}

// maxAppArgs bounds the words after an app server's name read as its arguments: the words
// judged may be a whole Makefile's or config's, and a command line ends where they do not show.
const maxAppArgs = 16

// appArgs marks the words that may be an app server's arguments (appTools): those within
// maxAppArgs words of its name, either side (a JSON config's "args" may come before its
// "command"), in the same command (not past a shell operator ; && || | or a line break). Read
// from the words as given (before their quotes and operators are trimmed).
func appArgs(words []string) []bool {
	if mutated("workspace-follow-app-tool") {
		return nil
	}
	var in []bool
	start := 0 // the first word of the current command
	for i, w := range words {
		t := strings.Trim(w, `"'`+"`;&|()")
		if appTools[filepath.Base(t)] {
			if in == nil {
				in = make([]bool, len(words))
			}
			for j := max(start, i-maxAppArgs); j <= i+maxAppArgs && j < len(words); j++ {
				in[j] = j != i
				if j > i && cmdEnds(words[j]) {
					break
				}
			}
		}
		if cmdEnds(w) {
			start = i + 1
		}
	}
	return in
}

// cmdEnds: the word w (untrimmed) ends a command, `srv.main;` or `&&`, or holds a line break.
func cmdEnds(w string) bool {
	return strings.ContainsAny(strings.TrimLeft(w, `"'`+"`"), ";&|") || strings.Contains(w, "\\n")
}

// appBases are the directories an app server's modules are looked up in: bases, and each
// directory its options (the words in marks) place them in, from each of bases.
func (f *follower) appBases(bases, words []string, in []bool) []string {
	if in == nil || mutated("workspace-follow-app-dir") {
		return bases
	}
	out := bases
	for i := 0; i+1 < len(words); i++ {
		if !in[i] || !appDirOpts[words[i]] {
			continue
		}
		for _, v := range strings.Split(words[i+1], ",") {
			if v == "" || unresolved(v) >= 0 {
				continue // a variable: the directory word is judged as any other
			}
			for _, b := range bases {
				if d := f.g.wsSpelled(absFrom(b, v)); strings.HasPrefix(d, f.g.ws+"/") && !slices.Contains(out, d) {
					out = append(slices.Clip(out), d)
				}
			}
		}
	}
	return out
}

// appModule protects what importing the module mod from base runs, narrowly: a word that only
// looks like a spec (`npm run test:unit`) must not protect a directory test/ whole, so the names
// Python tries for each package on the way and for the module are protected, there or not
// (a.*, a/__init__.*, a/b.*, a/b/__init__.*, in each __pycache__ too), and the files there are
// read as programs (a program read has its package protected whole: srv/main.py protects srv/).
func (f *follower) appModule(by, base, mod string, depth int) {
	d := base
	for _, part := range strings.Split(mod, ".") {
		f.pyShadows(by, d, part)
		pkg := filepath.Join(d, part)
		f.pyShadows(by, pkg, "__init__")
		for _, q := range []string{pkg + ".py", filepath.Join(pkg, "__init__.py")} {
			if strings.HasPrefix(q, f.g.ws+"/") && regular(q) {
				f.add(q, by)
				f.todo = append(f.todo, todoFile{q, by, depth + 1})
			}
		}
		d = pkg
	}
}
