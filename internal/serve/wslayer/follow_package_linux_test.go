package wslayer

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A program a protected config starts has its package protected whole (attack round atk40b,
// F1): 12 of 12 loading routes no list named (Python's subprocess of a workspace script,
// os.system, pickle, ctypes, code, timeit, cProfile; JS's module[k](…), process['dl'+'open'],
// .constructor.constructor(string), a function's constructor, WebAssembly) let a call rewrite
// what the program loads, applied, and the host's next start ran it. Now what lies in the
// program's package (its directory up to the nearest package.json, pyproject.toml …, not the
// workspace's root's) is refused whatever the route; a root package.json does not make the
// root the package, so the project's sources and docs beside the server are applied; a program
// at the workspace's root leaves every change no other rule judges unapplied, the reason
// saying to move it into a directory of its own. Red without it (mutant
// workspace-follow-program-dir-whole).
func TestCommitFollowerProtectsProgramPackageWhole(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	forms := map[string]struct{ main, loaded string }{
		"p_subprocess": {"import subprocess, os\nsubprocess.run(['python3', os.path.join(os.path.dirname(__file__), 'worker.py')])\n", "worker.py"},
		"p_system":     {"import os\nos.system('sh p_system/setup.sh')\n", "setup.sh"},
		"p_pickle":     {"import pickle\nwith open('p_pickle/model.pkl', 'rb') as fh:\n    model = pickle.load(fh)\n", "model.pkl"},
		"p_ctypes":     {"import ctypes\nlib = ctypes.CDLL('p_ctypes/libfast.so')\n", "libfast.so"},
		"p_code":       {"import code\ncode.InteractiveInterpreter().runsource(open('p_code/plugin.py').read())\n", "plugin.py"},
		"p_timeit":     {"import timeit\ntimeit.timeit(open('p_timeit/plugin.py').read(), number=1)\n", "plugin.py"},
		"p_cprofile":   {"import cProfile\ncProfile.run(open('p_cprofile/plugin.py').read())\n", "plugin.py"},
		"j_module":     {"const k = 'req' + 'uire';\nmodule[k]('./plugin.js');\n", "plugin.js"},
		"j_process":    {"const m = {exports: {}};\nprocess['dl' + 'open'](m, __dirname + '/native.node');\n", "native.node"},
		"j_ctor":       {"[].constructor.constructor(\"return process.mainModule.require('./plugin.js')\")();\n", "plugin.js"},
		"j_fnctor":     {"const src = require('fs').readFileSync(__dirname + '/plugin.txt', 'utf8');\n(() => {}).constructor(src)();\n", "plugin.txt"},
		"j_wasm":       {"const fs = require('fs');\nWebAssembly.instantiate(fs.readFileSync(__dirname + '/mod.wasm'));\n", "mod.wasm"},
	}
	ws := t.TempDir()
	servers := map[string]any{}
	for name, f := range forms {
		main, cmd := "index.js", "node"
		if strings.HasPrefix(name, "p_") {
			main, cmd = "main.py", "python3"
		}
		write(t, filepath.Join(ws, name, main), f.main)
		write(t, filepath.Join(ws, name, f.loaded), "ok\n")
		servers[name] = map[string]any{"command": cmd, "args": []string{name + "/" + main}}
	}
	b, _ := json.Marshal(map[string]any{"mcpServers": servers})
	write(t, filepath.Join(ws, ".mcp.json"), string(b))
	write(t, filepath.Join(ws, "package.json"), `{"name": "project"}`) // a root package.json: not the programs' package
	for name, f := range forms {
		loadRefused(t, ws, name+"/"+f.loaded, startsIt)
	}
	loadApplied(t, ws, "notes/todo.md")
	loadApplied(t, ws, "src/app.ts")

	t.Run("package-root", func(t *testing.T) {
		// the server's own package.json makes its package: all of tools/server (its
		// sources too), nothing beside it
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["tools/server/dist/index.js"]}}}`)
		write(t, filepath.Join(ws, "package.json"), `{"name": "project", "workspaces": ["tools/*"]}`)
		write(t, filepath.Join(ws, "tools", "server", "package.json"), `{"name": "server"}`)
		write(t, filepath.Join(ws, "tools", "server", "dist", "index.js"), "module[name]('./plugin.js');\n")
		loadRefused(t, ws, "tools/server/src/plugin.ts", startsIt)
		loadRefused(t, ws, "tools/server/dist/plugin.js", startsIt)
		for _, rel := range []string{"tools/other/index.js", "src/index.ts", "docs/usage.md", "README.md"} {
			loadApplied(t, ws, rel)
		}
	})
	t.Run("own-directory", func(t *testing.T) {
		// no package.json below the root: the program's directory
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "node", "args": ["tools/server/index.js"]}}}`)
		write(t, filepath.Join(ws, "package.json"), `{"name": "project"}`)
		write(t, filepath.Join(ws, "tools", "server", "index.js"), "const fn = require('fs').readFileSync(__dirname + '/h.txt', 'utf8');\n")
		loadRefused(t, ws, "tools/server/h.txt", startsIt)
		loadRefused(t, ws, "tools/server/lib/new.js", startsIt)
		for _, rel := range []string{"tools/build.sh", "src/main.ts", "docs/index.md"} {
			loadApplied(t, ws, rel)
		}
	})
	t.Run("root", func(t *testing.T) {
		// a program at the workspace's root: its package is the workspace, not protected
		// whole, and not a hole either: what no other rule judges is not applied
		ws := t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "python3", "args": ["main.py"]}}}`)
		write(t, filepath.Join(ws, "main.py"), "import pickle\nmodel = pickle.load(open('data/model.pkl', 'rb'))\n")
		for _, rel := range []string{"data/model.pkl", "notes/todo.md"} {
			loadRefused(t, ws, rel, "lies at the workspace's root")
			loadRefused(t, ws, rel, "move the program into a directory of its own")
		}
		// `python -m server` of a server.py at the root is one too
		ws = t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "python3", "args": ["-m", "server"]}}}`)
		write(t, filepath.Join(ws, "server.py"), "import subprocess\nsubprocess.run(['sh', 'tools/setup.sh'])\n")
		loadRefused(t, ws, "tools/setup.sh", "lies at the workspace's root")
		// and of a package below it, the package (read: what it loads outside is followed)
		ws = t.TempDir()
		write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "python3", "args": ["-m", "srv.main"]}}}`)
		write(t, filepath.Join(ws, "srv", "__init__.py"), "")
		write(t, filepath.Join(ws, "srv", "main.py"), "from lib import util\n")
		write(t, filepath.Join(ws, "lib", "util.py"), "import pickle\n")
		loadRefused(t, ws, "srv/data.pkl", startsIt)
		loadRefused(t, ws, "lib/model.pkl", startsIt)
		loadApplied(t, ws, "docs/x.md")
	})
}

// Python tries more names for a module than the one the follower resolved (attack round
// atk40b, F5): beside a protected helper.py, helper.cpython-311-x86_64-linux-gnu.so,
// helper.abi3.so and helper.so (extension modules, tried BEFORE the source) were a call's to
// write, and the host's next start imported the call's. Now every name the import system tries
// for an imported module is refused in each directory searched (the program's, the working
// directory's): the package helper/, every "helper." name, and __pycache__'s; a name that
// only starts alike (helpers.md) is applied. Red without it (mutant
// workspace-follow-python-ext-shadow).
func TestCommitFollowerPythonShadows(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"x": {"command": "python3", "args": ["srv/main.py"]}}}`)
	write(t, filepath.Join(ws, "srv", "main.py"), "import helper\nfrom util.text import clean\n")
	write(t, filepath.Join(ws, "srv", "helper.py"), "X = 1\n")
	shadows := []string{"helper.cpython-311-x86_64-linux-gnu.so", "helper.cpython-313-aarch64-linux-gnu.so", "helper.abi3.so",
		"helper.so", "helper.pyw", "helper.pyd", "util.cpython-312-x86_64-linux-gnu.so"}
	// the working directory's entry of sys.path (python -m, a server started from the root)
	for _, rel := range shadows {
		loadRefused(t, ws, rel, "a name Python tries for a module")
	}
	for _, rel := range []string{"helper.pyc", "__pycache__/helper.cpython-311.pyc", "util/__init__.py", "helper.py"} {
		loadRefused(t, ws, rel, "protected") // the protect list's *.pyc and __pycache__, the package and source as before
	}
	for _, rel := range []string{"helpers.md", "helper_notes.txt", "utility.py", "docs/helper.so"} {
		loadApplied(t, ws, rel)
	}
	t.Run("beside-the-module", func(t *testing.T) {
		resolutionAlone(t) // the program's directory is protected whole anyway: the names alone
		for _, rel := range shadows[:5] {
			loadRefused(t, ws, "srv/"+rel, "a name Python tries for a module")
		}
		loadApplied(t, ws, "srv/notes.md")
	})
}

// What a program names by a string literal outside its package is protected (atk40b F1's
// class, outside the package whole): a model pickle.load reads from the working directory, a
// script subprocess runs up from it (a program: its directory whole), a plugin a JS program
// reads by a path up; a data file beside the model, and docs, are applied. Red without it (mutant workspace-follow-program-literals).
func TestCommitFollowerProgramLiteralPaths(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".mcp.json"), `{"mcpServers": {"p": {"command": "python3", "args": ["tools/py/main.py"]}, "j": {"command": "node", "args": ["tools/js/index.js"]}}}`)
	write(t, filepath.Join(ws, "tools", "py", "main.py"), "import pickle, subprocess\nmodel = pickle.load(open('data/model.pkl', 'rb'))\n"+
		"subprocess.run(['sh', '../../scripts/setup.sh'])\nsubprocess.run('sh ./ops/later.sh', shell=True)\n")
	write(t, filepath.Join(ws, "tools", "js", "index.js"), "const fs = require('fs'), path = require('path');\n"+
		"(() => {}).constructor(fs.readFileSync(path.join(__dirname, \"../../shared/plugin.js\"), 'utf8'))();\n")
	write(t, filepath.Join(ws, "data", "model.pkl"), "x")
	write(t, filepath.Join(ws, "scripts", "setup.sh"), "echo\n")
	write(t, filepath.Join(ws, "shared", "plugin.js"), "1\n")
	// the scripts and plugin are programs: their directories whole too
	for _, rel := range []string{"data/model.pkl", "scripts/setup.sh", "scripts/other.sh", "shared/plugin.js", "shared/other.js", "ops/later.sh"} {
		loadRefused(t, ws, rel, startsIt)
	}
	for _, rel := range []string{"data/other.csv", "docs/x.md", "ops/other.md"} {
		loadApplied(t, ws, rel)
	}
}
