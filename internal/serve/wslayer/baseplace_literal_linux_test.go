package wslayer

import "testing"

// A join's part computed from literals ('.' + '.', '%s%s' % ('.', '.'), an f-string, '.' * 2,
// adjacent literals; JS '.' + '.', a template) was taken for a name below the program's place:
// python3/node loaded plugins/ a directory up (atk45a F9). Such a part may lead out, judged as
// an unresolved base; a join of the place with a name concatenated stays. Red with mutant
// workspace-base-place-literal-ops.
func TestCommitBaseLiteralParts(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	here := "os.path.join(os.path.dirname(os.path.abspath(__file__)), "
	py := map[string]string{"p90": "BASE = " + here + "'.' + '.')\n", "p91": "BASE = " + here + "'%s%s' % ('.', '.'))\n",
		"p92": "BASE = " + here + "f\"{'.'}{'.'}\")\n", "p93": "BASE = " + here + "'.' * 2)\n", "p94": "BASE = " + here + "'.' '.')\n"}
	placeRefused(t, py, placePyPre, placePyLoad, "plugins/p.py", "a loader the check does not resolve")
	const jsPre = "const path = require('path');\nconst name = ['p'][0];\n"
	const jsLoad = "require(path.join(BASE, 'plugins', name));\n"
	js := map[string]string{"j90": "const BASE = path.join(__dirname, '.' + '.');\n", "j91": "const BASE = path.join(__dirname, `${'.'}.`);\n"}
	placeRefused(t, js, jsPre, jsLoad, "plugins/p.js", "may lead out of its package")
	// ordinary: the place joined with a name concatenated to it
	placeApplied(t, map[string]string{"j92": jsPre + "const BASE = __dirname + '/lib/';\nrequire(BASE + name);\n",
		"j93": jsPre + "const BASE = path.join(__dirname, 'lib');\nrequire(path.join(BASE, 'x' + name));\n"}, "plugins/p.js")
}
