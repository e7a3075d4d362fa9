package wslayer

import (
	"path/filepath"
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
// word is such a spec: a word with a ":" and an attribute after it, or a module-taking
// option's value.
func pyAppSpec(prev, word string) (appSpec, bool) {
	if word == "" || strings.HasPrefix(word, "-") {
		return appSpec{}, false
	}
	left, attr, colon := strings.Cut(word, ":")
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
