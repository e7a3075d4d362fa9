package wslayer

import (
	"path/filepath"
	"testing"
)

// a Python program loading plugins/p.py from BASE
const placePyPre = "import importlib.util, os\nfrom pathlib import Path\n"
const placePyLoad = "s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'plugins', 'p.py'))\n" +
	"m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n"

// atk44a F5: a base from the program's own place going up by a spelling not counted (a loop's
// dirname, rsplit, rpartition, split and slice, parts[:-2]; JS's module.path, replace, substring,
// +=) is refused as python3/node ran plugins/ a directory up; ordinary loaders over the program's
// own directory still leave the rest applied. Red with mutant workspace-base-place-ops.
func TestCommitFollowerBaseByPlace(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	py := map[string]string{"p50": "BASE = os.path.abspath(__file__)\nfor _ in range(2):\n    BASE = os.path.dirname(BASE)\n",
		"p51": "BASE = os.path.abspath(__file__).rsplit(os.sep, 2)[0]\n",
		"p52": "BASE = os.sep.join(os.path.abspath(__file__).split(os.sep)[:-2])\n",
		"p53": "BASE = os.path.abspath(__file__).rpartition(os.sep)[0].rpartition(os.sep)[0]\n",
		"p54": "BASE = os.path.join(*Path(__file__).resolve().parts[:-2])\n",
		"p55": "HERE = os.path.abspath(__file__)\nBASE = HERE[:HERE.rindex(os.sep, 0, HERE.rindex(os.sep))]\n",
	}
	placeRefused(t, py, placePyPre, placePyLoad, "plugins/p.py", "a loader the check does not resolve")
	// ordinary loaders over the program's own directory
	own := map[string]string{
		"p60": placePyPre + "PLUGINS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'plugins')\n" +
			"for fn in sorted(os.listdir(PLUGINS)):\n    if fn.endswith('.py'):\n        name = fn[:-3]\n" +
			"        s = importlib.util.spec_from_file_location(name, os.path.join(PLUGINS, fn))\n" +
			"        m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n",
		"p61": placePyPre + "BASE = Path(__file__).parent / 'plugins'\n" +
			"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'p.py'))\n" +
			"m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n",
		"p62": placePyPre + "for p in sorted(Path(__file__).resolve().parent.glob('plugins/*.py')):\n" +
			"    s = importlib.util.spec_from_file_location(p.stem, p)\n    m = importlib.util.module_from_spec(s); s.loader.exec_module(m)\n",
	}
	loadRefused(t, placeApplied(t, own, "plugins/p.py"), "p60/a.py", startsIt)

	const jsPre = "const path = require('path');\nconst name = ['p'][0];\n"
	const jsLoad = "require(path.join(BASE, 'plugins', name));\n"
	js := map[string]string{}
	for i, v := range []string{"const BASE = path.dirname(module.path);\n", "const BASE = path.dirname(require.main.path);\n",
		"const BASE = __dirname.replace(/[\\\\/][^\\\\/]+$/, '');\n", "let BASE = __dirname;\nBASE += '/..';\n",
		"const BASE = __dirname.substring(0, __dirname.lastIndexOf(path.sep));\n",
		"const BASE = __dirname.split(path.sep).slice(0, -1).join(path.sep);\n"} {
		js["j5"+string(rune('0'+i))] = v
	}
	placeRefused(t, js, jsPre, jsLoad, "plugins/p.js", "may lead out of its package")
	jown := map[string]string{
		"j60": "const fs = require('fs');\nconst path = require('path');\nconst dir = path.join(__dirname, 'plugins');\n" +
			"for (const f of fs.readdirSync(dir)) {\n  if (f.endsWith('.js')) require(path.join(dir, f.slice(0, -3)));\n}\n",
		"j61": jsPre + "const BASE = path.join(module.path, 'lib');\nrequire(path.join(BASE, name));\n",
	}
	placeApplied(t, jown, "plugins/p.js")
}

// placeApplied writes the programs in one workspace and wants rel (a directory up from each)
// and an unrelated file applied.
func placeApplied(t *testing.T, forms map[string]string, rel string) string {
	t.Helper()
	ws := loaderProject(t, forms)
	write(t, filepath.Join(ws, rel), "X = 1\n")
	loadApplied(t, ws, rel)
	loadApplied(t, ws, "notes/todo.md")
	return ws
}

// placeRefused writes each program (pre, its base, load) alone in a workspace and wants the
// file a directory up refused for the reason.
func placeRefused(t *testing.T, bases map[string]string, pre, load, rel, reason string) {
	t.Helper()
	for name, v := range bases {
		ws := loaderProject(t, map[string]string{name: pre + v + load})
		write(t, filepath.Join(ws, rel), "X = 1\n")
		loadRefused(t, ws, rel, reason)
	}
}
