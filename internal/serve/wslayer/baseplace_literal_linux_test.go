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

// A join's part made by joining literals or a literal sequence (”.join(['.', '.']), str.join,
// JS ['.', '.'].join(”)) was taken for a name below the program's place: python3/node loaded
// plugins/ a directory up (atk46a F6). Such a part may lead out, judged as an unresolved base;
// a join of literals elsewhere in the program leaves its place a place. Red with mutant
// workspace-base-place-literal-join.
func TestCommitBaseLiteralJoins(t *testing.T) {
	resolutionAlone(t)
	t.Setenv("HOME", t.TempDir())
	here := "os.path.join(os.path.dirname(os.path.abspath(__file__)), "
	py := map[string]string{"p81": "BASE = " + here + "''.join(['.', '.']))\n", "p82": "BASE = " + here + "''.join(('.', '.')))\n",
		"p83": "BASE = " + here + "'.'.join(['', '', '']))\n", "p84": "BASE = " + here + "str.join('', ['.', '.']))\n",
		"p85": "SEP = ''\nBASE = " + here + "SEP.join(['.', '.']))\n"}
	placeRefused(t, py, placePyPre, placePyLoad, "plugins/p.py", "a loader the check does not resolve")
	const jsPre = "const path = require('path');\nconst name = ['p'][0];\n"
	const jsLoad = "require(path.join(BASE, 'plugins', name));\n"
	js := map[string]string{"j81": "const BASE = path.join(__dirname, ['.', '.'].join(''));\n",
		"j82": "const BASE = path.join(__dirname, ['', '', ''].join('.'));\n"}
	placeRefused(t, js, jsPre, jsLoad, "plugins/p.js", "may lead out of its package")
	// ordinary: the place joined with a name; a join of literals elsewhere in the program
	placeApplied(t, map[string]string{"p86": placePyPre + "print(', '.join(['a', 'b']))\nBASE = " + here + "'lib')\n" +
		"s = importlib.util.spec_from_file_location('p', os.path.join(BASE, 'p.py'))\n"}, "plugins/p.py")
	placeApplied(t, map[string]string{"j86": jsPre + "console.log(['a', 'b'].join(', '));\nconst BASE = path.join(__dirname, 'lib');\n" +
		"require(path.join(BASE, name));\n"}, "plugins/p.js")
}
