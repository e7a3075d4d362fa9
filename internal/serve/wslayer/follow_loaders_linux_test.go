package wslayer

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// loaderProject writes one program per form, each in its own directory (the fallback
// protects a directory whole: one form's must not cover another's), each loading a.js / a.py
// beside it, and a .mcp.json starting them all.
func loaderProject(t *testing.T, forms map[string]string) string {
	t.Helper()
	ws := t.TempDir()
	servers := map[string]any{}
	for name, src := range forms {
		main := "index.js"
		cmd := "node"
		switch {
		case strings.HasPrefix(name, "p"):
			main, cmd = "main.py", "python3"
		case strings.HasSuffix(name, "m"):
			main = "index.mjs"
		}
		write(t, filepath.Join(ws, name, main), src)
		write(t, filepath.Join(ws, name, "a.js"), "module.exports = 1;\n")
		write(t, filepath.Join(ws, name, "a.py"), "X = 1\n")
		servers[name] = map[string]any{"command": cmd, "args": []string{name + "/" + main}}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	write(t, filepath.Join(ws, ".mcp.json"), string(b))
	return ws
}

func loadRefused(t *testing.T, ws, rel, reason string) {
	t.Helper()
	if applied, why, sum := commitOne(t, ws, rel, "evil\n"); applied || !strings.Contains(why, reason) {
		t.Errorf("%s: applied %v, refused %q, want %q named (%s)", rel, applied, why, reason, sum)
	}
}

func loadApplied(t *testing.T, ws, rel string) {
	t.Helper()
	start := time.Now()
	if applied, why, sum := commitOne(t, ws, rel, "ok\n"); !applied {
		t.Errorf("%s, which no protected program loads, was refused (%q): %s", rel, why, sum)
	}
	t.Logf("%s: committed in %v", rel, time.Since(start).Round(time.Millisecond))
}

const startsIt = `".mcp.json\" starts`

// A protected JS program's loads in any spelling the scan does not resolve protect its package
// whole (attack round atk39b, F3): 17 of 17 other spellings (a comment before the "(", the
// bundler's (0, require), an alias, createRequire, require.call, an escaped identifier, fork,
// new Worker, a comment before a from's literal, module.require of a name) were dropped and a
// call's rewrite of what they load ran on the host. A file no program loads is still applied.
// Red when a mention the scan does not resolve is dropped (mutant workspace-follow-loader-mention).
func TestCommitFollowerFailsClosedOnLoaderMentions(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	forms := map[string]string{
		"j01":  "require/**/('./a.js');\n",
		"j02":  "(0, require)('./a.js');\n",
		"j03":  "const r = require; r('./a.js');\n",
		"j04":  "const { createRequire } = require('module'); const req = createRequire(__filename); req('./a.js');\n",
		"j05":  "require.call(null, './a.js');\n",
		"j06":  "requ\\u0069re('./a.js');\n",
		"j07":  "require('child_process').fork(__dirname + '/a.js');\n",
		"j08":  "const { Worker } = require('worker_threads'); new Worker(require('path').join(__dirname, 'a.js'));\n",
		"j09m": "import x from /* c */ './a.js'; console.log(x);\n",
		"j10":  "module.require('./a.js');\n",
		"j11":  "require(`./a.js`);\n",
		"j15":  "const name = './a.js'; module.require(name);\n",
		"j16":  "const vm = require('vm'); vm.runInThisContext(src);\n",
		"j17":  "const { fork } = require('child_process'); fork('j17/a.js');\n",
		"j18":  "new Function('return require')()('./a.js');\n",
		"j19":  "const { spawn } = require('child_process'); spawn(process.execPath, [file]);\n",
		"j20m": "const w = new Worker(new URL('./a.js', import.meta.url));\n",
		"j21":  "const m = require('module'); m._load('./a.js');\n",
		"j22":  "const load = require\n;load('./a.js')\n",
	}
	ws := loaderProject(t, forms)
	for name := range forms {
		loadRefused(t, ws, name+"/a.js", startsIt)
	}
	loadApplied(t, ws, "notes/todo.md")
}

// What the scan reads of an ordinary program is what node runs: a loader word in a comment, a
// string, a regular expression or a template is no mention, nor is require.main, typeof
// require, import.meta, a destructured { spawn } or a child process of git: the program's
// other files are still applied.
func TestCommitFollowerReadsOrdinaryProgramsExactly(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["server.js"]}}}`)
	write(t, filepath.Join(ws, "package.json"), `{"name": "app", "main": "server.js", "dependencies": {"express": "^4.19.0", "dotenv": "^16.0.0"}}`)
	write(t, filepath.Join(ws, "server.js"), `#!/usr/bin/env node
'use strict';
// require the environment first: eval, fork and new Worker are not used here
require('dotenv').config();
const express = require('express');
const path = require("path");
const { spawn, execFile } = require('child_process');
const routes = require('./routes');
/* import x from './nothing' */
const app = express();
const re = /require\(['"](.*)['"]\)/g; const slash = /\/\*/; const q = "import('./x')";
const help = `+"`"+`usage: ${process.argv[1]} [--port n] (require ${path.sep})`+"`"+`;
if (typeof require !== 'undefined' && require.main === module) { console.log(import.meta); }
app.use(express.json());
app.use('/api', routes);
app.get('/git', (req, res) => { const g = spawn('git', ['log', '-1']); g.stdout.pipe(res); });
app.get('/m', (req, res) => res.send(re.exec(req.query.s) + path.join(__dirname, 'public')));
app.use(express.static(path.join(__dirname, 'public')));
app.listen(process.env.PORT || 3000, () => console.log(`+"`"+`listening on ${process.env.PORT || 3000}`+"`"+`));
`)
	write(t, filepath.Join(ws, "routes", "index.js"), "const router = require('express').Router();\nconst users = require('./users');\nrouter.use('/users', users);\nmodule.exports = router;\n")
	write(t, filepath.Join(ws, "routes", "users.js"), "module.exports = require('express').Router().get('/', (q, r) => r.json([]));\n")
	write(t, filepath.Join(ws, "node_modules", "express", "package.json"), `{"name": "express"}`)
	for _, rel := range []string{"public/index.html", "README.md", "test/server.test.js", "src/other.js"} {
		loadApplied(t, ws, rel)
	}
	for _, rel := range []string{"routes/users.js", "routes/index.js", "server.js"} {
		loadRefused(t, ws, rel, startsIt)
	}
}

// A computed name that may lead out of the program's package (atk39b F3): below a literal
// start (path.join(__dirname, '..', 'plugins', name)) that directory is protected whole; from
// the working directory, the environment or another ".." nothing not judged is applied, the
// program named; a directory's package.json "main" leading out of it is read and protected.
// Red without each (mutants workspace-follow-computed-outside, workspace-follow-dir-main).
func TestCommitFollowerComputedOutsideThePackage(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"a": {"command": "node", "args": ["j12/server/index.js"]}, "b": {"command": "node", "args": ["j14/index.js"]}}}`)
	write(t, filepath.Join(ws, "j12", "server", "index.js"), "const path = require('path');\nrequire(path.join(__dirname, '..', 'plugins', name));\n")
	write(t, filepath.Join(ws, "j12", "plugins", "a.js"), "module.exports = 1;\n")
	write(t, filepath.Join(ws, "j14", "index.js"), "require('./lib');\n")
	write(t, filepath.Join(ws, "j14", "lib", "package.json"), `{"main": "../plugins/a.js"}`)
	write(t, filepath.Join(ws, "j14", "plugins", "a.js"), "require('../../shared/x.js');\n")
	write(t, filepath.Join(ws, "shared", "x.js"), "module.exports = 1;\n")
	for _, rel := range []string{"j12/plugins/a.js", "j12/plugins/new.js", "j14/plugins/a.js", "shared/x.js"} {
		loadRefused(t, ws, rel, startsIt)
	}
	loadApplied(t, ws, "j12/notes.md")
	loadApplied(t, ws, "j14/plugins/b.js")
	for _, src := range []string{
		"require(process.cwd() + '/plugins/' + name);\n",
		"require(path.join(__dirname, 'plugins', name, '..', '..', '..', 'x'));\n",
		"import(`${process.env.PLUGINS}/${name}.js`);\n",
		"require(path.resolve(name));\n",
	} {
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"a": {"command": "node", "args": ["srv/server/index.js"]}}}`)
		write(t, filepath.Join(ws, "srv", "server", "index.js"), src)
		loadRefused(t, ws, "plugins/a.js", "a name that may lead out of its package")
	}
}

// Python's loaders but import_module, __import__ and runpy of what pyDynamic resolves (atk39b
// F3): spec_from_file_location with exec_module, import_module as another name,
// exec(open(…).read()), getattr(importlib, …) protect the program's directory whole; a
// sys.path changed to a directory up leaves nothing not judged applied. A loader word in a
// comment or a string, re.compile, sys.path read, are none. Red without it (mutant
// workspace-follow-py-loader).
func TestCommitFollowerPythonLoaders(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	forms := map[string]string{
		"p01": "import importlib.util, os\ns = importlib.util.spec_from_file_location('a', os.path.join(os.path.dirname(__file__), 'a.py'))\nm = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n",
		"p02": "from importlib import import_module as load\nname = 'a'\nload(name)\n",
		"p03": "import os\nexec(open(os.path.join(os.path.dirname(__file__), 'a.py')).read())\n",
		"p04": "import importlib\ngetattr(importlib, 'import_module')('a')\n",
		"p06": "import builtins\nm = builtins.__import__\nm('a')\n",
		"p07": "from importlib.machinery import SourceFileLoader\nSourceFileLoader('a', 'p07/a.py').load_module()\n",
	}
	ws := loaderProject(t, forms)
	for name := range forms {
		loadRefused(t, ws, name+"/a.py", startsIt)
	}
	loadApplied(t, ws, "notes/todo.md")
	ws = loaderProject(t, map[string]string{"p08": `"""Loads plugins the way importlib would; exec( is not used."""
import re, sys
# exec(open('x').read()) is how the old version loaded them
PAT = re.compile(r"\w+")
print(sys.path[0], "eval(")
`})
	loadApplied(t, ws, "p08/a.py")
	ws = loaderProject(t, map[string]string{"p09": "import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'plugins'))\nimport helper\n"})
	loadRefused(t, ws, "plugins/helper.py", "that uses sys.path, a loader the check does not resolve")
}

// "May lead out" was judged on the loader's line only (review41 #15): a base built on another
// line, two directories up, then joined with 'plugins' on the loader's line, left plugins/
// writable. A name the loader's line uses is judged by its assignments too; one that stays in
// the program's directory still protects the directory only. Red with mutants
// workspace-py-loader-one-line (Python), workspace-js-base-one-line (JS) and, for the steps up
// atk43 F4 found uncounted, workspace-py-base-self-steps.
func TestCommitFollowerBaseOnAnotherLine(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	for _, lang := range []struct {
		plugin, why string
		up          map[string]string
		own, ownSrc string // a base in the program's own directory: the directory protected
	}{
		{"plugins/p.py", "a loader the check does not resolve", map[string]string{
			"p10": "import importlib.util, os\nBASE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))\n" +
				"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))\n",
			"p11": "import sys\nfrom pathlib import Path\nHERE = Path(__file__).resolve().parent\nROOT = HERE.parent\n" +
				"sys.path.insert(0, str(ROOT / 'plugins'))\nimport p\n",
			"p12": "import os\nTOP = os.environ.get('APP_HOME', '.')\nexec(open(os.path.join(TOP, 'plugins', 'p.py')).read())\n",
			// each step up counted, os.path.split(p)[0] and os.pardir too (atk43 F4)
			"p14": "import importlib.util, os\nBASE = os.path.dirname(__file__)\nBASE = os.path.dirname(BASE)\n" +
				"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))\n",
			"p15": "import importlib.util, os\nBASE = os.path.split(os.path.split(__file__)[0])[0]\n" +
				"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))\n",
			"p16": "import importlib.util, os\nBASE = os.path.join(__file__, os.pardir, os.pardir)\n" +
				"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))\n",
		}, "p13", "import importlib.util, os\nBASE = os.path.dirname(__file__)\n" +
			"s = importlib.util.spec_from_file_location('a', os.path.join(BASE, 'a.py'))\n"},
		{"plugins/p.js", "may lead out of its package", map[string]string{
			"j20": "const path = require('path');\nconst BASE = path.resolve(__dirname, '..');\nrequire(path.join(BASE, 'plugins', name));\n",
			"j21": "const path = require('path');\nlet up = path.join(__dirname, '..');\nconst PLUG = path.join(up, 'plugins');\nrequire(path.join(PLUG, name));\n",
			"j22": "const dir = process.env.PLUGINS || 'plugins';\nrequire(`${dir}/${name}.js`);\n",
			"j24": "const path = require('path');\nconst BASE = path.dirname(__dirname);\nrequire(path.join(BASE, 'plugins', name));\n",
			"j25": "const path = require('path');\nrequire(path.join(path.dirname(__dirname), 'plugins', name));\n",
			"j26": "const path = require('path');\nconst BASE = path.parse(__dirname).dir;\nrequire(path.join(BASE, 'plugins', name));\n",
		}, "j23", "const path = require('path');\nconst { fileURLToPath } = require('url');\nconst HERE = path.dirname(fileURLToPath(import.meta.url));\n" +
			"const PLUG = path.join(HERE, 'plugins');\nconst url = 'http://example.com';\nrequire(path.join(PLUG, name));\n"},
	} {
		for name, src := range lang.up {
			ws := loaderProject(t, map[string]string{name: src})
			write(t, filepath.Join(ws, lang.plugin), "X = 1\n")
			loadRefused(t, ws, lang.plugin, lang.why)
		}
		ws := loaderProject(t, map[string]string{lang.own: lang.ownSrc})
		loadRefused(t, ws, lang.own+"/a"+filepath.Ext(lang.plugin), startsIt)
		loadApplied(t, ws, "notes/todo.md")
	}
}

// The scan asks jsJudge only of the identifiers jsWatched names: each loader and runner it
// judges must be among them.
func TestJSWatchedNamesEveryLoader(t *testing.T) {
	for _, m := range []map[string]bool{jsRunners, jsCodeRunners} {
		for w := range m {
			if !jsWatched(w) {
				t.Errorf("%s is judged but not watched", w)
			}
		}
	}
}

// The follower's matching of names against package.json maps is bounded in its work, not in
// names alone (attack round atk39b F5: each name without an exact key scanned every key, 25,000
// keys × 32,000 names 19 s a commit under the workspace's lock). The `*` keys are indexed by
// prefix once: a 25,000-key map and 4,000 names commit an ordinary edit at once; past the work's
// bound the commit refuses what it did not judge, the bound named. Red when every key is
// scanned for each name (mutant workspace-follow-map-index: the bound is reached).
func TestCommitFollowerMapWorkBounded(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	const keys, names = 25000, 4000
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"s": {"command": "node", "args": ["server/index.js"]}}}`)
	imports := map[string]string{}
	for i := range keys {
		imports[fmt.Sprintf("#p%d/*", i)] = fmt.Sprintf("./x%d/*.js", i)
	}
	b, _ := json.Marshal(map[string]any{"name": "srv", "imports": imports})
	write(t, filepath.Join(ws, "server", "package.json"), string(b))
	var src strings.Builder
	for i := range names {
		fmt.Fprintf(&src, "require('#p%d/m');\n", i*keys/names)
	}
	write(t, filepath.Join(ws, "server", "index.js"), src.String())
	loadApplied(t, ws, "notes.md")
	loadRefused(t, ws, "server/x6250/m.js", startsIt)
	defer func(n int) { maxMapWork = n }(maxMapWork)
	maxMapWork = 1000
	loadRefused(t, ws, "notes.md", "maps whose matching passes 1000 steps")
}
