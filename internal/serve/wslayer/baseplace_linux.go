package wslayer

import (
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// A loader's base built from the program's own place was judged "may lead out" only when a
// spelling of "up" was recognised in it (dirname counted, '..', pardir), so other ways of going
// up (a loop re-assigning BASE = dirname(BASE), rsplit/rpartition/split and a slice, Path's
// parts[:-2]; JS's replace, substring and lastIndexOf, module.path's dirname) left plugins/ a
// directory up writable though python3/node ran it (atk44a F5). Now a value built from the
// program's place (__file__; __dirname, __filename, import.meta, module.path, require.main) is
// known to stay only when every operation on it is one the reader knows keeps it there (its
// dirname, counted; a join of names below it; abspath/resolve); any other call, method or
// subscript may lead out, judged as an unresolved base is.

var (
	pySubscript = lazy.Regexp(`[\w)\]][ \t]*\[`)
	pyCallName  = lazy.Regexp(`(\.?)[ \t]*([A-Za-z_]\w*)[ \t]*\(`)
	// what enumerates a directory (names below it), reads a file or loads a module: its result
	// is no place (a loader's own place is judged at its mention)
	pyNotPlace = lazy.Regexp(`\b(?:listdir|scandir|iterdir|glob|rglob|walk|iglob|open|read|read_text|read_bytes|load|loads|` +
		`spec_from_file_location|module_from_spec|exec_module|import_module|__import__|run_path|run_module|SourceFileLoader|load_module|load_source)[ \t]*\(`)
	// a part computed from literals (atk45a F9): an operator between literals ('.' + '.', '%s%s' %
	// ('.', '.'), '.' * 2), adjacent literals ('.' '.'), an f-string's or a template's expression
	litComputed = lazy.Regexp(`['"]\s*[+%*]\s*(?:[fFrRbBuU]*['"(]|\d)|['"][ \t]+['"]|\b(?:[fF][rR]?|[rR][fF])['"][^'"]*\{|` + "`[^`]*\\$\\{")
	// a join by a literal or of a literal sequence (atk46a F6): a string's join method (''.join(…),
	// str.join), a join whose argument is a list or tuple display (os.path.join takes no list),
	// an array display's join (JS ['.', '.'].join('')): its value is computed, no name below
	litJoin     = lazy.Regexp(`(?:['"\]]|\bstr)[ \t]*\.[ \t]*join[ \t]*\(|\bjoin[ \t]*\([ \t]*[\[(]`)
	jsSubscript = lazy.Regexp(`[\w$)\]][ \t]*\[`)
	jsCallName  = lazy.Regexp(`(\.?)[ \t]*([A-Za-z_$][\w$]*)[ \t]*\(`)
	jsNotPlace  = lazy.Regexp(`\b(?:readdirSync|readdir|opendirSync|opendir|globSync|glob|readFileSync|readFile|require|import)[ \t]*\(`)
	// require.main.path and module.path are the program's directory, their filename its file
	jsModDir  = lazy.Regexp(`\b(?:require\.main|module)\.path\b`)
	jsModFile = lazy.Regexp(`\b(?:require\.main|module)\.filename\b`)
)

// the calls a place's value may go through and stay in it (or, for dirname, be counted)
var (
	pyPlaceCalls = map[string]bool{"dirname": true, "abspath": true, "realpath": true, "join": true, "joinpath": true,
		"normpath": true, "resolve": true, "absolute": true, "Path": true, "PurePath": true, "PosixPath": true,
		"str": true, "fspath": true, "not": true, "and": true, "or": true, "if": true, "else": true, "in": true,
		"return": true, "lambda": true, "exists": true, "isdir": true, "isfile": true,
		"nullcontext": true} // with nullcontext(p) as BASE: BASE is p
	jsPlaceCalls = map[string]bool{"join": true, "resolve": true, "dirname": true, "normalize": true,
		"fileURLToPath": true, "require": true, "String": true, "toString": true, "return": true, "typeof": true,
		"if": true, "function": true, "await": true, "existsSync": true}
)

// pyOddOp says whether code does to a place anything but what keeps it one the reader counts:
// a subscript or slice, or a call or method not known (a def's calls are judged by its body).
func pyOddOp(code, raw string, defs map[string]bool) bool {
	if mutated("workspace-base-place-ops") {
		return false
	}
	if litComputed().MatchString(raw) && !mutated("workspace-base-place-literal-ops") {
		return true // a join's part computed, not a name below the place
	}
	if litJoin().MatchString(raw) && !mutated("workspace-base-place-literal-join") {
		return true
	}
	if pySubscript().MatchString(code) {
		return true
	}
	for _, m := range pyCallName().FindAllStringSubmatch(code, -1) {
		if !pyPlaceCalls[m[2]] && (m[1] != "" || !defs[m[2]]) {
			return true
		}
	}
	return false
}

// jsPlaced says whether the value code (jsHere applied) is built from the program's own place.
func jsPlaced(code string) bool {
	return (strings.Contains(code, "__dirname") || strings.Contains(code, "__filename")) && !jsNotPlace().MatchString(code)
}

// jsOddOp says whether code, its strings blanked, does to a place anything but what keeps it
// one the reader counts (a function of the program's is judged by its body).
func jsOddOp(code string, fns map[string]bool) bool {
	if mutated("workspace-base-place-ops") {
		return false
	}
	if litComputed().MatchString(code) && !mutated("workspace-base-place-literal-ops") {
		return true // a join's part computed, not a name below the place (atk45a F9)
	}
	if litJoin().MatchString(code) && !mutated("workspace-base-place-literal-join") {
		return true // ['.', '.'].join(''): a join of literals (atk46a F6)
	}
	code = jsStrLit().ReplaceAllString(code, `''`)
	if jsSubscript().MatchString(code) || strings.Contains(code, "+=") {
		return true
	}
	for _, m := range jsCallName().FindAllStringSubmatch(code, -1) {
		if !jsPlaceCalls[m[2]] && (m[1] != "" || !fns[m[2]]) {
			return true
		}
	}
	return false
}
