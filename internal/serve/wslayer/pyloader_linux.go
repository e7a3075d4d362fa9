package wslayer

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// Python loads a file by more names than import_module, __import__ and runpy (attack round
// atk39b, F3): importlib.util.spec_from_file_location with exec_module (the usual plugin
// loader), `import_module as load`, exec(open(…).read()), getattr(importlib, …), a sys.path
// changed before a plain import; none was seen, and a call's rewrite of what they load ran on
// the host. Now any mention of a loader (importlib but its import_module and reload, runpy but
// run_module and run_path, exec, eval, compile, __import__ but called, the loaders and specs
// of importlib, imp, pkgutil, zipimport, builtins, sys.executable, a sys.path or
// site.addsitedir change) that pyDynamic does not resolve protects the program's directory
// whole; one whose line may lead out of it ("..", the working directory, the environment, the
// home, an absolute path; for sys.path a directory up) leaves every change not otherwise judged
// unapplied (runCut), as at the workspace's root.

var (
	pyLoaderWord = lazy.Regexp(`\b(importlib|import_module|__import__|run_module|run_path|runpy|exec|eval|compile|execfile|` +
		`SourceFileLoader|SourcelessFileLoader|ExtensionFileLoader|spec_from_file_location|spec_from_loader|module_from_spec|` +
		`exec_module|load_module|load_source|imp|pkgutil|zipimport|builtins|__builtins__|__loader__|addsitedir|` +
		`sys\s*\.\s*(?:path|executable|meta_path|path_hooks|modules))\b`)
	// the forms pyDynamic resolves, and imports that only name them
	pyLoaderOK = lazy.Regexp(`^(?:importlib\s*\.\s*(?:import_module|reload)\s*\(|runpy\s*\.\s*(?:run_module|run_path)\s*\(|` +
		`(?:import_module|__import__|run_module|run_path)\s*\()`)
	// import importlib, runpy; from importlib import import_module: only naming them
	pyImportLine = lazy.Regexp(`^[ \t]*(?:import[ \t]+[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*|from[ \t]+(?:importlib|runpy)[ \t]+import[ \t]+[\w, \t]+)[ \t]*$`)
	// one ^ before the alternation: Go's regexp stops at the first byte only when the whole
	// expression starts anchored, and a ^ in each branch scanned the rest of the text (review41 #2)
	pyNameOnlyEach = lazy.Regexp(`^(?:importlib|runpy|import_module|reload|run_module|run_path)[ \t]*(?:,|\r?\n|$)|^(?:importlib|runpy)[ \t]+import[ \t]`) // the mutant's
	pyNameOnly     = lazy.Regexp(`^(?:(?:importlib|runpy|import_module|reload|run_module|run_path)[ \t]*(?:,|\r?\n|$)|(?:importlib|runpy)[ \t]+import[ \t])`)
	pySysPathRead  = lazy.Regexp(`^sys\s*\.\s*path\s*(?:\[[^\]\n]*\]\s*(?:[^=\s]|==|$)|[)\],:;]|\s*(?:==|!=|$)|\s+(?:if|else|for|in|and|or)\b)`)
	pyUp           = lazy.Regexp(`\.\.|pardir|getcwd|cwd\(|environ|getenv|expanduser|home|parents|argv|['"]/`)
)

// pyCode is a Python text with its comments blanked and its strings' contents blanked (their
// quotes kept): a loader named in a comment or a docstring loads nothing by itself.
func pyCode(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '#':
			for ; i < len(b) && b[i] != '\n'; i++ {
				b[i] = ' '
			}
		case c == '\'' || c == '"':
			q := string(b[i : i+1])
			if i+2 < len(b) && b[i+1] == c && b[i+2] == c {
				q = string(b[i : i+3])
			}
			j := i + len(q)
			for ; j < len(b) && !strings.HasPrefix(string(b[j:min(j+3, len(b))]), q); j++ {
				if b[j] == '\\' && j+1 < len(b) {
					b[j] = ' '
					j++
				} else if len(q) == 1 && b[j] == '\n' {
					break
				}
				if b[j] != '\n' {
					b[j] = ' '
				}
			}
			i = j + len(q) - 1
		}
	}
	return string(b)
}

// pyLoaders judges each mention of a loader in a Python program the follower reads. A mention's
// line is found from the newlines' offsets and what is judged of a line (an import line; "may
// lead out" from the first judged mention to its end) once per line: scanning the line for each
// mention was O(mentions × line) (review41 #2: 229 KB of `a.exec;` on one line, 3.7 s).
func (f *follower) pyLoaders(t todoFile, dir, text string) {
	if mutated("workspace-follow-py-loader") {
		return
	}
	code := pyCode(text)
	lines := pyLines{code: code, text: text}
	for _, loc := range pyLoaderWord().FindAllStringIndex(code, -1) {
		if f.g.runCut != "" {
			return
		}
		w, rest := code[loc[0]:loc[1]], code[loc[0]:]
		ls, le := lines.span(loc[0])
		before := strings.TrimRight(code[ls:loc[0]], " \t")
		switch {
		case pyLoaderOK().MatchString(rest):
			continue // pyDynamic judges the call
		case lines.nameOnly(rest) && lines.importLine(ls, le):
			continue // import importlib: its uses are judged
		case strings.HasSuffix(before, "."):
			if w == "exec" || w == "eval" || w == "compile" || w == "imp" || w == "builtins" {
				continue // re.compile, cursor.exec: methods of their own
			}
		case strings.HasSuffix(before, "def") || strings.HasSuffix(before, "class"):
			continue
		case strings.HasPrefix(w, "sys") && strings.HasSuffix(w, "modules"),
			strings.HasPrefix(w, "sys") && strings.HasSuffix(w, "path") && pySysPathRead().MatchString(rest):
			continue // sys.modules, sys.path read: nothing loads by them
		}
		// sys.path changed: a plain import may load from where it points; any loader whose line
		// may lead out of the directory. A later mention's rest of the line is within the first's:
		// the first's answer holds for it (and, had it been "up", the loop would have ended).
		orig := text[loc[0]:lines.logicalEnd(loc[0], le)] // the strings too: '..'
		up, seen := lines.up[ls]
		if !seen || mutated("workspace-py-loader-per-mention") {
			ups, parents := lines.names(loc[0], loc[0]+len(orig))
			up = ups || pyUp().MatchString(orig) || strings.Count(orig, "dirname")+strings.Count(orig, ".parent")+parents >= 2
			lines.setUp(ls, up)
		}
		if dir == f.g.ws || up && !mutated("workspace-follow-computed-outside") {
			if f.g.runCut == "" {
				rel, _ := filepath.Rel(f.g.ws, t.path)
				why := w + ", a loader the check does not resolve (" + strings.Join(strings.Fields(clip(orig)), " ") + ")"
				f.g.runCut = "a program (" + strconv.Quote(filepath.ToSlash(rel)) + ") that uses " + why
			}
			return
		}
		f.add(dir, t.by)
		if w == "addsitedir" || strings.HasPrefix(w, "sys") && strings.HasSuffix(w, "path") {
			f.pyCwdPaths(t, dir, orig)
		}
	}
}

// pyStrLit is a one-line Python string literal's contents.
var pyStrLit = lazy.Regexp(`['"]([^'"\n]+)['"]`)

// pyCwdPaths protects the directories a relative literal of a sys.path change (the text orig)
// names from the working directory (Python takes a relative sys.path entry from it): the
// workspace's root, where hooks and clients start the program, and the program's directory.
// `sys.path.insert(0, 'server'); import helper` in a lefthook script lefthook runs from the
// root loaded server/helper.py, writable (atk48a F1); the program's directory alone was protected.
func (f *follower) pyCwdPaths(t todoFile, dir, orig string) {
	if mutated("workspace-py-syspath-cwd") {
		return
	}
	for _, m := range pyStrLit().FindAllStringSubmatch(orig, 8) {
		lit := m[1]
		if filepath.IsAbs(lit) || strings.ContainsAny(lit, "{%$") {
			continue // an absolute path, a format: not the working directory's (up judges them)
		}
		for _, b := range uniq(f.g.ws, dir) {
			if p := f.g.wsSpelled(absFrom(b, lit)); p != f.g.ws && strings.HasPrefix(p, f.g.ws+"/") {
				f.add(p, t.by)
			}
		}
	}
}

// pyLines finds a Python text's lines by the offsets of its newlines, computed once, and keeps
// what pyLoaders judged of each line (by its start).
type pyLines struct {
	code, text string // the program blanked (pyCode) and as written
	nl         []int  // offsets of the newlines
	made       bool
	imp        map[int]bool // pyImportLine, by line start
	up         map[int]bool // "may lead out", from the line's first judged mention
	// a name's assignments (the right sides' offsets) and what they were judged to be: a base
	// built on another line (BASE = dirname(dirname(__file__)); …join(BASE, 'plugins')) is
	// judged on its own line too (review41 #15)
	assigns map[string][][2]int
	defs    map[string]bool // the names a def binds: each call of one counts its steps up
	judged  map[string]pyBase
	ends    []int // the offsets of the newlines that end a logical line
	work    int   // what values may still be read (linear in the program; 0 not yet set)
}

// pyBase is what a name's assignments make of it: may it lead out, and how many directories up
// (dirname, .parent) it goes.
type pyBase struct {
	up      bool
	parents int
	placed  bool // built from the program's own place (__file__): judged by pyOddOp (atk44a F5)
}

var (
	pyAssign = lazy.Regexp(`(?m)^[ \t]*([A-Za-z_]\w*)[ \t]*(?::[^=\n]*)?(?:[-+*/]|//)?=([^=][^\n]*)$`)
	pyWord   = lazy.Regexp(`[A-Za-z_]\w*`)
)

// names judges the names the code span uses that the program assigns: whether one may lead
// out, and the most directories up one goes (each name's assignments judged once).
func (l *pyLines) names(s, e int) (bool, int) {
	if mutated("workspace-py-loader-one-line") {
		return false, 0
	}
	if l.assigns == nil {
		l.assigns, l.defs = pyBindings(l.code)
		l.judged = map[string]pyBase{}
		if mutated("workspace-py-base-binding-forms") {
			l.assigns = map[string][][2]int{}
			for _, m := range pyAssign().FindAllStringSubmatchIndex(l.code, -1) {
				n := l.code[m[2]:m[3]]
				l.assigns[n] = append(l.assigns[n], [2]int{m[4], m[5]})
			}
		}
	}
	up, parents := false, 0
	for _, n := range append(pyNames(l.code[s:e]), pyFieldNames(l.code, l.text, s, e)...) {
		b := l.base(n, 0)
		up, parents = up || b.up, max(parents, b.parents)
	}
	return up, parents
}

// pyNames are the names code uses, not an attribute's (os.path's path is not a variable path).
func pyNames(code string) []string {
	var out []string
	for _, m := range pyWord().FindAllStringIndex(code, -1) {
		if before := strings.TrimRight(code[:m[0]], " \t"); !strings.HasSuffix(before, ".") {
			out = append(out, code[m[0]:m[1]])
		}
	}
	return out
}

// base judges the name n by its assignments (the most directories up of any), depth names deep.
func (l *pyLines) base(n string, depth int) pyBase {
	if b, ok := l.judged[n]; ok {
		return b
	}
	rhs := l.assigns[n]
	if len(rhs) == 0 {
		return pyBase{}
	}
	if depth > 8 {
		return pyBase{} // as before names were followed: the line's own words judge it
	}
	if l.work == 0 {
		l.work = 2*len(l.code) + 1<<20
	}
	for _, r := range rhs {
		if l.work -= r[1] - r[0]; l.work <= 0 {
			l.work = -1
			l.judged[n] = pyBase{up: true} // past the work bound: not read, may lead out
			return l.judged[n]
		}
	}
	l.judged[n] = pyBase{} // a cycle through other names counts n once
	var b pyBase
	self := 0 // BASE = dirname(BASE): each such step goes up from what BASE was (atk43 F4)
	for _, r := range rhs {
		orig := l.text[r[0]:r[1]]
		// os.path.split(p)[0] is dirname(p); os.pardir is ".."
		e := pyBase{up: pyUp().MatchString(orig), parents: strings.Count(orig, "dirname") + strings.Count(orig, ".parent") + strings.Count(orig, "path.split(")}
		most, own := 0, false // a base built from another: its directories up and the deepest operand's
		code := l.code[r[0]:r[1]]
		e.placed = strings.Contains(code, "__file__")
		for _, m := range append(pyNames(code), pyFieldNames(l.code, l.text, r[0], r[1])...) {
			if m == n {
				own = true
				continue
			}
			mb := l.base(m, depth+1)
			if l.defs[m] && !mutated("workspace-py-base-def-calls") {
				e.parents += mb.parents // up(up(__file__)): each call goes up again
				mb.parents = 0
			}
			e.up, most, e.placed = e.up || mb.up, max(most, mb.parents), e.placed || mb.placed
		}
		// a place's value only by operations known to keep it there; names enumerated below
		// it are no place (for f in os.listdir(HERE): f[:-3])
		e.placed = e.placed && !pyNotPlace().MatchString(code)
		e.up = e.up || e.placed && pyOddOp(code, l.text[r[0]:r[1]], l.defs)
		b.placed = b.placed || e.placed
		if own && !mutated("workspace-py-base-self-steps") {
			self += e.parents + most
			// BASE = dirname(BASE) may run again (a loop): how far up is not counted by its text
			b.up = b.up || e.up || e.parents+most > 0 && !mutated("workspace-base-place-ops")
			continue
		}
		e.parents += most
		b.up, b.parents = b.up || e.up, max(b.parents, e.parents)
	}
	b.parents += self
	l.judged[n] = b
	return b
}

// span is the start and end (its newline, or the text's end) of the line holding offset i.
func (l *pyLines) span(i int) (int, int) {
	if mutated("workspace-py-loader-per-mention") {
		ls := strings.LastIndexByte(l.code[:i], '\n') + 1
		le := strings.IndexByte(l.code[i:], '\n')
		if le < 0 {
			return ls, len(l.code)
		}
		return ls, i + le
	}
	if !l.made {
		l.made = true
		for j := 0; j < len(l.code); {
			k := strings.IndexByte(l.code[j:], '\n')
			if k < 0 {
				break
			}
			l.nl = append(l.nl, j+k)
			j += k + 1
		}
	}
	n, _ := slices.BinarySearch(l.nl, i)
	ls, le := 0, len(l.code)
	if n > 0 {
		ls = l.nl[n-1] + 1
	}
	if n < len(l.nl) {
		le = l.nl[n]
	}
	return ls, le
}

// importLine says whether the line [ls, le) only imports (import importlib, runpy).
func (l *pyLines) importLine(ls, le int) bool {
	if v, ok := l.imp[ls]; ok && !mutated("workspace-py-loader-per-mention") {
		return v
	}
	if l.imp == nil {
		l.imp = map[int]bool{}
	}
	l.imp[ls] = pyImportLine().MatchString(l.code[ls:le])
	return l.imp[ls]
}

// nameOnly says whether the mention at rest's start only names importlib or runpy.
func (l *pyLines) nameOnly(rest string) bool {
	if mutated("workspace-py-loader-per-mention") {
		return pyNameOnlyEach().MatchString(rest)
	}
	return pyNameOnly().MatchString(rest)
}

func (l *pyLines) setUp(ls int, up bool) {
	if l.up == nil {
		l.up = map[int]bool{}
	}
	l.up[ls] = up
}
