package wslayer

import (
	"slices"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// A Python loader's base is judged by the value it holds, whichever form binds it (atk43 F4):
// `NAME = …` on a line of its own was the only form read, so a base bound by a tuple target
// (`HERE, BASE = …`), a `for` or `with … as` target, a walrus, an assignment after a `;` or a
// compound statement's `:`, one whose value continues on the next lines, or returned by a
// `def` (`BASE = root()`) stayed "in the directory" whatever it held, and plugins/p.py a
// directory up stayed writable though python3 ran it. pyBindings reads the program's
// statements as Python splits them (brackets and a backslash continue a line, `;` and a
// compound header's `:` end one) and records each form's value for the names it binds.

var (
	pyDefHead  = lazy.Regexp(`^(?:async[ \t]+)?def[ \t]+([A-Za-z_]\w*)`)
	pyCompound = lazy.Regexp(`^(?:async[ \t]+)?(?:if|elif|else|for|while|with|try|except|finally|def|class|match|case)\b`)
	pyNoBind   = lazy.Regexp(`^(?:import|from|except|class|global|nonlocal|del|assert|raise|pass|break|continue)\b`)
	pyReturn   = lazy.Regexp(`^(?:return|yield(?:[ \t]+from)?)\b`)
	pyForIn    = lazy.Regexp(`\bfor\b([^:=]*?)\bin\b`)
	pyWithAs   = lazy.Regexp(`\bas\b[ \t]*([A-Za-z_][\w, \t()\[\]*]*)`)
	pyWalrus   = lazy.Regexp(`([A-Za-z_]\w*)[ \t]*:=`)
)

// pyStmt is a simple statement's offsets in the program, its physical line's indent, and
// whether it starts its line (a def's body is what follows it more deeply indented).
type pyStmt struct {
	s, e, indent int
	first        bool
}

// pyStatements yields code's (pyCode's: strings blanked, quotes kept) statements: Python's
// logical lines, split at `;` at depth 0. A string's newlines (triple-quoted) do not end a line.
func pyStatements(code string, yield func(pyStmt)) {
	start, first, indent := 0, true, 0
	each := func(i int, nl bool) {
		if first {
			indent = len(code[start:i]) - len(strings.TrimLeft(code[start:i], " \t")) // its line's
		}
		if strings.TrimSpace(code[start:i]) != "" {
			yield(pyStmt{s: start, e: i, indent: indent, first: first})
			first = false
		}
		start, first = i+1, first || nl
	}
	pyScan(code, each)
	each(len(code), true)
}

// pyScan calls end at each `;` and newline that ends a statement (outside brackets and
// strings, not after a backslash), nl for a newline.
func pyScan(code string, end func(i int, nl bool)) {
	depth := 0
	for i := 0; i < len(code); i++ {
		switch code[i] {
		case '\'', '"':
			i = pyStringEnd(code, i)
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(0, depth-1)
		case '\\':
			i++ // a line continued
		case ';', '\n':
			if depth == 0 {
				end(i, code[i] == '\n')
			}
		}
	}
}

// pyStringEnd is the offset of the last quote of the string whose first quote is at i (its
// contents blanked by pyCode, so the next same quote closes it; a one-quote string ends at its
// line's end).
func pyStringEnd(code string, i int) int {
	q := code[i : i+1]
	if strings.HasPrefix(code[i:], strings.Repeat(q, 3)) {
		q = code[i : i+3]
	}
	j := strings.Index(code[i+len(q):], q)
	if nl := strings.IndexByte(code[i+1:], '\n'); len(q) == 1 && nl >= 0 && (j < 0 || nl < j) {
		return i + nl // unterminated: the newline ends the line
	}
	if j < 0 {
		return len(code) - 1
	}
	return i + len(q) + j + len(q) - 1
}

// pyDef is a def whose body the statements being read are in.
type pyDef struct {
	indent int
	name   string
}

// pyBindings maps each name the program binds to the values (offsets of their code) bound to
// it, and names the defs among them.
func pyBindings(code string) (map[string][][2]int, map[string]bool) {
	out, defNames := map[string][][2]int{}, map[string]bool{}
	bind := func(n string, s, e int) { out[n] = append(out[n], [2]int{s, e}) }
	var defs []pyDef
	pyStatements(code, func(st pyStmt) {
		s := st.e - len(strings.TrimLeft(code[st.s:st.e], " \t\r\n"))
		if st.first {
			for len(defs) > 0 && defs[len(defs)-1].indent >= st.indent {
				defs = defs[:len(defs)-1]
			}
		}
		// a compound header (`if x: BASE = …`, `def f(): return …`): its body on the same line
		// is a statement of its own
		for pyCompound().MatchString(code[s:st.e]) {
			if m := pyDefHead().FindStringSubmatch(code[s:st.e]); m != nil {
				defs = append(defs, pyDef{st.indent, m[1]})
				defNames[m[1]] = true
			}
			c := pyHeaderColon(code, s, st.e)
			if c < 0 {
				break
			}
			pyBindIn(code, s, c, true, defs, bind)
			s = c + 1 + len(code[c+1:st.e]) - len(strings.TrimLeft(code[c+1:st.e], " \t"))
		}
		pyBindIn(code, s, st.e, false, defs, bind)
	})
	return out, defNames
}

// pyBindIn records what the statement [s, e) binds (header: a compound statement's header).
func pyBindIn(code string, s, e int, header bool, defs []pyDef, bind func(string, int, int)) {
	stmt := code[s:e]
	for _, m := range pyForIn().FindAllStringSubmatchIndex(stmt, -1) {
		for _, n := range pyTargetNames(stmt[m[2]:m[3]]) {
			bind(n, s+m[1], e) // a for target, a comprehension's too: what it iterates
		}
	}
	for _, m := range pyWalrus().FindAllStringSubmatchIndex(stmt, -1) {
		bind(stmt[m[2]:m[3]], s+m[1], e)
	}
	switch {
	case header && strings.HasPrefix(strings.TrimPrefix(stmt, "async "), "with"):
		for _, m := range pyWithAs().FindAllStringSubmatchIndex(stmt, -1) {
			for _, n := range pyTargetNames(stmt[m[2]:m[3]]) {
				bind(n, s, s+m[0]) // what the with statement holds
			}
		}
	case header || pyNoBind().MatchString(stmt):
	case pyReturn().MatchString(stmt):
		if len(defs) > 0 {
			bind(defs[len(defs)-1].name, s, e) // a def's name holds what it returns
		}
	default:
		pyAssignIn(code, s, e, bind)
	}
}

// pyAssignIn reads an assignment statement: each target (`A = B = v`, `HERE, BASE = a, b`,
// `x: T = v`, `x += v`) bound to its value, a tuple's element by element when the counts agree.
func pyAssignIn(code string, s, e int, bind func(string, int, int)) {
	var eqs []int
	pyTop(code, s, e, func(i int) bool {
		if code[i] != '=' {
			return true
		}
		prev, next := byte(' '), byte(' ')
		if i > s {
			prev = code[i-1]
		}
		if i+1 < e {
			next = code[i+1]
		}
		if next != '=' && !strings.ContainsRune("=!<>:", rune(prev)) {
			eqs = append(eqs, i)
		}
		return true
	})
	if len(eqs) == 0 {
		return
	}
	vs := eqs[len(eqs)-1] + 1
	vals := pyTopSplit(code, vs, e)
	from := s
	for _, eq := range eqs {
		target := code[from:eq]
		if c := strings.IndexByte(target, ':'); c >= 0 {
			target = target[:c] // an annotation
		}
		parts := pyTopSplit(code, from, from+len(target))
		for j, p := range parts {
			for _, n := range pyTargetNames(code[p[0]:p[1]]) {
				if len(parts) == len(vals) && len(parts) > 1 {
					bind(n, vals[j][0], vals[j][1])
				} else {
					bind(n, vs, e)
				}
			}
		}
		from = eq + 1
	}
}

// pyTopSplit splits [s, e) at its commas at depth 0, a wrapping () or [] taken off first.
func pyTopSplit(code string, s, e int) [][2]int {
	for s < e && (code[s] == ' ' || code[s] == '\t') {
		s++
	}
	for e > s && strings.ContainsRune(" \t\r\n+-*/%&|^<>@", rune(code[e-1])) {
		e-- // an augmented assignment's operator
	}
	if e-s >= 2 && (code[s] == '(' && code[e-1] == ')' || code[s] == '[' && code[e-1] == ']') && pyWraps(code, s, e) {
		s, e = s+1, e-1
	}
	var out [][2]int
	from := s
	pyTop(code, s, e, func(i int) bool {
		if code[i] == ',' {
			out = append(out, [2]int{from, i})
			from = i + 1
		}
		return true
	})
	if strings.TrimSpace(code[from:e]) != "" || len(out) == 0 {
		out = append(out, [2]int{from, e})
	}
	return out
}

// pyWraps says whether the bracket at s closes at e-1 (not `(a)(b)`).
func pyWraps(code string, s, e int) bool {
	depth := 0
	for i := s; i < e-1; i++ {
		switch code[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth == 0 {
				return false
			}
		}
	}
	return true
}

// pyTargetNames are the names a target binds: plain names (a starred one, inside a tuple's
// brackets), not an attribute's or a subscript's (obj.base = …, d[k] = … bind no name).
func pyTargetNames(target string) []string {
	var out []string
	for _, m := range pyWord().FindAllStringIndex(target, -1) {
		before, after := strings.TrimRight(target[:m[0]], " \t"), strings.TrimLeft(target[m[1]:], " \t")
		if !strings.HasSuffix(before, ".") && !strings.HasPrefix(after, ".") && !strings.HasPrefix(after, "[") {
			out = append(out, target[m[0]:m[1]])
		}
	}
	return out
}

// pyHeaderColon is the offset of a compound header's `:` at depth 0 in [s, e), or -1.
func pyHeaderColon(code string, s, e int) int {
	c := -1
	pyTop(code, s, e, func(i int) bool {
		if code[i] == ':' && (i+1 >= e || code[i+1] != '=') {
			c = i
		}
		return c < 0
	})
	return c
}

// pyTop calls at for each offset of [s, e) outside brackets (a bracket not among them), until
// at says to stop.
func pyTop(code string, s, e int, at func(i int) bool) {
	depth := 0
	for i := s; i < e; i++ {
		switch code[i] {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth = max(0, depth-1)
		default:
			if depth == 0 && !at(i) {
				return
			}
		}
	}
}

// logicalEnd is the end of the logical line holding offset i (le: its physical line's end): a
// loader's call continued on the next lines (`spec_from_file_location('p',⏎ os.path.join(…))`)
// is judged whole.
func (l *pyLines) logicalEnd(i, le int) int {
	if mutated("workspace-py-loader-logical-line") {
		return le
	}
	if l.ends == nil {
		l.ends = []int{}
		pyScan(l.code, func(j int, nl bool) {
			if nl {
				l.ends = append(l.ends, j)
			}
		})
	}
	n, _ := slices.BinarySearch(l.ends, i)
	if n < len(l.ends) {
		return max(le, l.ends[n])
	}
	return len(l.code)
}

// pyFieldNames are the names in the replacement fields of the strings in [s, e) (pyCode blanks
// an f-string's `{BASE}` with its words): f'{BASE}/plugins/p.py' uses BASE.
func pyFieldNames(code, text string, s, e int) []string {
	if mutated("workspace-py-fstring-fields") {
		return nil
	}
	var out []string
	for i := s; i < e; i++ {
		if text[i] != '{' || code[i] != ' ' {
			continue
		}
		j := strings.IndexAny(text[i+1:e], "}\n")
		if j < 0 {
			break
		}
		out = append(out, pyNames(text[i+1:i+1+j])...)
		i += j
	}
	return out
}
