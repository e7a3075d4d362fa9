package wslayer

import (
	"path/filepath"
	"testing"
)

// A loader's base is judged by the value it holds, whichever form binds it (atk43 F4): a
// Python base bound by a tuple, list or chained target, a for, with or walrus target, after a
// `;`, continued on the next lines, or returned by a def (`BASE = root()`, `root()` inline, a
// def going up from its argument called twice), and a loader's call or f-string continued or
// spelled so, left plugins/p.py a directory up writable though python3 ran it (each checked
// with python3); JS's destructuring, a second declarator, for-of, a value on the next lines and
// a function returning the base (node ran plugins/p.js). Beside each, the same form holding the
// program's own directory: an ordinary change is still applied. Red with mutants
// workspace-py-base-binding-forms, workspace-py-base-def-calls, workspace-py-loader-logical-line,
// workspace-py-fstring-fields, workspace-js-base-binding-forms, workspace-js-base-fn-calls.
func TestCommitFollowerBaseBindingForms(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	const pyUp = "os.path.dirname(os.path.dirname(os.path.abspath(__file__)))"
	const pyHere = "os.path.dirname(os.path.abspath(__file__))"
	pyLoad := func(base string) string {
		return "s = importlib.util.spec_from_file_location('p', os.path.join(" + base + ", 'plugins', 'p.py'))\n" +
			"m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n"
	}
	const pyPre = "import importlib.util, os\n"
	py := func(v string) map[string]string {
		return map[string]string{
			"p30": pyPre + "HERE, BASE = " + pyHere + ", " + v + "\n" + pyLoad("BASE"),
			"p31": pyPre + "[HERE, BASE] = [" + pyHere + ", " + v + "]\n" + pyLoad("BASE"),
			"p32": pyPre + "HERE = BASE = " + v + "\n" + pyLoad("BASE"),
			"p33": pyPre + "for BASE in [" + v + "]:\n    pass\n" + pyLoad("BASE"),
			"p34": pyPre + "import contextlib\nwith contextlib.nullcontext(" + v + ") as BASE:\n    pass\n" + pyLoad("BASE"),
			"p35": pyPre + "if (BASE := " + v + "):\n    pass\n" + pyLoad("BASE"),
			"p36": pyPre + "x = 1; BASE = " + v + "\n" + pyLoad("BASE"),
			"p37": pyPre + "BASE = (\n    " + v + "\n)\n" + pyLoad("BASE"),
			"p38": pyPre + "def root():\n    return " + v + "\nBASE = root()\n" + pyLoad("BASE"),
			"p39": pyPre + "def root():\n    return " + v + "\n" + pyLoad("root()"),
			"p40": pyPre + "if True: BASE = " + v + "\n" + pyLoad("BASE"),
			"p41": pyPre + "exec(open(\n    os.path.join(" + v + ", 'plugins', 'p.py')).read())\n",
			"p42": pyPre + "BASE = " + v + "\nexec(open(f'{BASE}/plugins/p.py').read())\n",
		}
	}
	// a def going up from what it is given, called twice
	up := map[string]string{"p43": pyPre + "def up(p):\n    return os.path.dirname(p)\nBASE = up(up(os.path.abspath(__file__)))\n" + pyLoad("BASE")}
	for name, src := range py(pyUp) {
		up[name] = src
	}
	for name, src := range up {
		ws := loaderProject(t, map[string]string{name: src})
		write(t, filepath.Join(ws, "plugins/p.py"), "X = 1\n")
		loadRefused(t, ws, "plugins/p.py", "a loader the check does not resolve")
	}
	// the same forms holding the program's own directory: its directory protected, the rest applied
	own := py(pyHere)
	own["p43"] = pyPre + "def up(p):\n    return os.path.dirname(p)\nBASE = up(os.path.abspath(__file__))\n" + pyLoad("BASE")
	ws := loaderProject(t, own)
	write(t, filepath.Join(ws, "plugins/p.py"), "X = 1\n")
	loadApplied(t, ws, "plugins/p.py")
	loadApplied(t, ws, "notes/todo.md")
	loadRefused(t, ws, "p30/a.py", startsIt)

	const jsPre = "const path = require('path');\nconst name = ['p'][0];\n"
	const jsLoad = "require(path.join(BASE, 'plugins', name));\n"
	js := func(v string) map[string]string {
		return map[string]string{
			"j30": jsPre + "const [HERE, BASE] = [__dirname, " + v + "];\n" + jsLoad,
			"j31": jsPre + "const { BASE } = { BASE: " + v + " };\n" + jsLoad,
			"j32": jsPre + "let HERE = __dirname, BASE = " + v + ";\n" + jsLoad,
			"j33": jsPre + "for (const BASE of [" + v + "]) {\n  " + jsLoad + "}\n",
			"j34": jsPre + "const BASE =\n  " + v + ";\n" + jsLoad,
			"j35": jsPre + "function root() {\n  return " + v + ";\n}\nconst BASE = root();\n" + jsLoad,
			"j36": jsPre + "function root() { return " + v + "; }\nrequire(path.join(root(), 'plugins', name));\n",
			"j37": jsPre + "const root = () => {\n  return " + v + ";\n};\nconst BASE = root();\n" + jsLoad,
		}
	}
	jup := js("path.dirname(__dirname)")
	jup["j38"] = jsPre + "const up = (p) => path.dirname(p);\nconst BASE = up(__dirname);\n" + jsLoad
	for name, src := range jup {
		ws := loaderProject(t, map[string]string{name: src})
		write(t, filepath.Join(ws, "plugins/p.js"), "X = 1\n")
		loadRefused(t, ws, "plugins/p.js", "may lead out of its package")
	}
	jown := js("path.join(__dirname, 'lib')")
	jown["j38"] = jsPre + "const up = (p) => path.dirname(p);\nconst BASE = up(__filename);\n" + jsLoad
	ws = loaderProject(t, jown)
	write(t, filepath.Join(ws, "plugins/p.js"), "X = 1\n")
	loadApplied(t, ws, "plugins/p.js")
	loadApplied(t, ws, "notes/todo.md")
}
