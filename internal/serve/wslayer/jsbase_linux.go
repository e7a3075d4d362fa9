package wslayer

import (
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// jsBases are a JS program's assignments, read for the names a computed require or import
// uses: "may lead out of the package" was judged on the argument's text alone, and a base
// built on another line (const BASE = path.resolve(__dirname, '..'); … require(path.join(BASE,
// 'plugins', name))) left the plugins writable (review41 #15). A name is judged by each of its
// assignments (jsOutside, and the names those use, each once: linear in the program).
type jsBases struct {
	text    string
	assigns map[string][]string
	fns     map[string]bool // the names bound to a function
	judged  map[string]bool
	work    int             // what values may still be read (linear in the program; 0 not yet set)
	fnUp    map[string]bool // a function going up from what it is given, by name
	placed  map[string]bool // built from the program's own place: judged by jsOddOp (atk44a F5)
}

var (
	jsAssign   = lazy.Regexp(`(?m)(?:\b(?:const|let|var)[ \t]+|^[ \t]*)([A-Za-z_$][\w$]*)[ \t]*=[ \t]*([^=;\n][^;\n]*)`)
	jsWord     = lazy.Regexp(`[A-Za-z_$][\w$]*`)
	jsDirURL   = lazy.Regexp(`(?:path\.)?dirname\(\s*(?:url\.)?fileURLToPath\(\s*import\.meta\.url\s*\)\s*\)|import\.meta\.dirname`)
	jsFileURL  = lazy.Regexp(`(?:url\.)?fileURLToPath\(\s*import\.meta\.url\s*\)|import\.meta\.filename`)
	jsParentOf = lazy.Regexp(`dirname\(|\.parse\(|\.slice\(|\.split\(`)
	// a template's words stay: its ${…} are code
	jsStrLit = lazy.Regexp(`'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"`)
)

// outside says whether a name the computed argument arg uses may lead out by its assignments.
func (b *jsBases) outside(arg string) bool {
	if b == nil || mutated("workspace-js-base-one-line") {
		return false
	}
	if b.assigns == nil {
		b.judged, b.placed = map[string]bool{}, map[string]bool{}
		b.assigns, b.fns = jsBindings(b.text)
		if mutated("workspace-js-base-binding-forms") {
			b.assigns = map[string][]string{}
			for _, m := range jsAssign().FindAllStringSubmatch(b.text, -1) {
				b.assigns[m[1]] = append(b.assigns[m[1]], m[2])
			}
		}
	}
	for _, n := range jsNames(arg) {
		if b.judge(n, 0) {
			return true
		}
	}
	return false
}

func (b *jsBases) judge(n string, depth int) bool {
	if v, ok := b.judged[n]; ok {
		return v
	}
	rhs := b.assigns[n]
	if len(rhs) == 0 || depth > 8 {
		return false // as before names were followed: the argument's own text judges it
	}
	b.judged[n] = false // a name assigned from itself counts once
	up := false
	if b.work == 0 {
		b.work = 2*len(b.text) + 1<<20
	}
	for _, r := range rhs {
		if b.work -= len(r) + 1; b.work <= 0 && !mutated("workspace-js-base-one-line") {
			b.work = -1
			up = true // past the work bound (A = A = … a value read again for each): not read, may lead out
			break
		}
		r = jsHere(r)
		// a directory up from the program's (path.dirname(__dirname), path.parse(…).dir, a
		// path split and sliced) may leave its package (atk43 F4)
		up = up || jsOutside(r) || jsUpFromHere(b.calls(r))
		placed := jsPlaced(r)
		for _, m := range jsNames(r) {
			up = up || m != n && b.judge(m, depth+1)
			placed = placed || m != n && b.placed[m]
		}
		// a place's value only by operations known to keep it there (atk44a F5)
		placed = placed && !jsNotPlace().MatchString(r)
		up = up || placed && jsOddOp(r, b.fns)
		b.placed[n] = b.placed[n] || placed
	}
	b.judged[n] = up
	return up
}

// jsHere writes ESM's spellings of the program's own place as CommonJS's (__dirname,
// __filename): `path.dirname(fileURLToPath(import.meta.url))` is where the program is, not a
// URL that may lead anywhere, nor a directory up.
func jsHere(code string) string {
	if (strings.Contains(code, "module.") || strings.Contains(code, "require.main")) && !mutated("workspace-base-place-ops") {
		// module.path, require.main.path: the program's directory too (atk44a F5)
		code = jsModFile().ReplaceAllString(jsModDir().ReplaceAllString(code, "__dirname"), "__filename")
	}
	if !strings.Contains(code, "import.meta") {
		return code
	}
	return jsFileURL().ReplaceAllString(jsDirURL().ReplaceAllString(code, "__dirname"), "__filename")
}

// jsUpFromHere says whether code takes a directory up from the program's own place (its
// dirname, a path parsed, split and sliced: atk43 F4); only __dirname's, __filename's or
// import.meta's, so an ordinary list's split is not taken for one.
func jsUpFromHere(code string) bool {
	if mutated("workspace-py-base-self-steps") || !strings.Contains(code, "__dirname") && !strings.Contains(code, "__filename") && !strings.Contains(code, "import.meta") {
		return false
	}
	return jsParentOf().MatchString(strings.ReplaceAll(code, "dirname(__filename", "")) // __filename's dirname is the program's own
}

// jsNames are the names code uses outside its strings, not a property's (path.join's join).
func jsNames(code string) []string {
	code = jsStrLit().ReplaceAllString(code, `''`)
	var out []string
	for _, m := range jsWord().FindAllStringIndex(code, -1) {
		if before := strings.TrimRight(code[:m[0]], " \t"); !strings.HasSuffix(before, ".") {
			out = append(out, code[m[0]:m[1]])
		}
	}
	return out
}

// calls writes each call in code of a function that goes up from what it is given (const up =
// (p) => path.dirname(p)) as dirname's: up(__dirname) is a directory up, up(__filename) the
// program's own.
func (b *jsBases) calls(code string) string {
	if !strings.Contains(code, "(") || mutated("workspace-js-base-fn-calls") {
		return code
	}
	if b.fnUp == nil {
		b.fnUp = map[string]bool{}
	}
	done := map[string]bool{}
	for _, n := range jsNames(code) {
		if done[n] {
			continue
		}
		done[n] = true
		up, seen := b.fnUp[n]
		if !seen {
			b.fnUp[n] = false // each function's values read once
			for _, v := range b.assigns[n] {
				if !b.fns[n] || up {
					break
				}
				b.work -= len(v)
				up = b.work <= 0 || jsParentOf().MatchString(v) // past the work bound: may go up
			}
			b.fnUp[n] = up
		}
		if up {
			code = strings.ReplaceAll(code, n+"(", "dirname(")
		}
	}
	return code
}
