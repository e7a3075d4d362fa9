package wslayer

// A JS program's base is judged by the value it holds, whichever form binds it (atk43 F4's
// counterpart): `NAME = …` up to the line's end was the only form read, so a base bound by a
// destructuring pattern (`const [HERE, BASE] = […]`, `const { BASE } = {…}`), a second
// declarator (`let HERE = …, BASE = …`), a `for (const BASE of […])`, a value continued on the
// next lines, or returned by a function (`function root() { return path.dirname(__dirname) }`,
// `require(path.join(root(), …))`) was not judged, and plugins/p.js a directory up stayed
// writable though node ran it. jsBindings reads the program as tokens (jsLex) and records each
// form's value for the names it binds.

import "strings"

// jsBinder collects the bindings of one program.
type jsBinder struct {
	text string
	toks []jsT
	out  map[string][]string
	fns  []jsFn          // the functions whose body is open, innermost last
	fn   map[string]bool // the names bound to a function
	work int             // the tokens values may still be read for (linear in the program)
}

// jsT is a token kept compact (a program is up to 8 MiB of them): its kind and place.
type jsT struct {
	at, end int32
	kind    byte
}

// jsFn is a function whose body is open: its name and the brace depth inside its body.
type jsFn struct {
	name  string
	depth int
}

// jsUnread is the value of a name whose value was longer than the work bound allows reading:
// judged as one that may lead out (a name that a program this large binds so fails closed).
const jsUnread = ".."

// jsBindings maps each name the program binds to the texts of the values bound to it, and
// names those bound to a function.
func jsBindings(text string) (map[string][]string, map[string]bool) {
	b := &jsBinder{text: text, out: map[string][]string{}, fn: map[string]bool{}}
	l := &jsLex{text: text}
	for t := l.next(); t.kind != 0; t = l.next() {
		b.toks = append(b.toks, jsT{int32(t.at), int32(t.end), t.kind})
	}
	b.work = 4*len(b.toks) + 1<<16
	// pending: the function whose body the next { opens; named: the name an assignment just
	// bound, the function's when its value is one (= () => { … }, = function () { … })
	depth, pending, named := 0, "", ""
	for k := range b.toks {
		switch {
		case b.word(k, "function") && k+1 < len(b.toks) && b.toks[k+1].kind == 'i':
			pending = b.s(k + 1) // function root() { … }
			b.fn[pending] = true
		case b.word(k, "function") || b.is(k, ">") && b.is(k-1, "=") && b.toks[k-1].end == b.toks[k].at:
			pending = named
			b.fn[named] = named != ""
		case b.is(k, ";"):
			named = ""
		case b.word(k, "return") && len(b.fns) > 0:
			b.bind(b.fns[len(b.fns)-1].name, k+1)
		case b.word(k, "for") && b.is(k+1, "("):
			b.forOf(k + 1)
		case b.is(k, "{"):
			depth++
			if pending != "" && (b.is(k-1, ")") || b.is(k-1, ">")) {
				b.fns = append(b.fns, jsFn{pending, depth})
				pending = ""
			}
		case b.is(k, "}"):
			for len(b.fns) > 0 && b.fns[len(b.fns)-1].depth >= depth {
				b.fns = b.fns[:len(b.fns)-1]
			}
			depth--
		case b.is(k, "=") && b.assigns(k):
			names := b.targets(k - 1)
			for _, n := range names {
				b.bind(n, k+1)
			}
			named = ""
			if len(names) == 1 {
				named = names[0]
			}
		}
	}
	return b.out, b.fn
}

// s is token k's text.
func (b *jsBinder) s(k int) string { return b.text[b.toks[k].at:b.toks[k].end] }

// word says whether token k is the identifier or keyword w.
func (b *jsBinder) word(k int, w string) bool {
	return k >= 0 && k < len(b.toks) && b.toks[k].kind == 'i' && b.s(k) == w
}

// is says whether token k is the punctuation p (?. a member's . too).
func (b *jsBinder) is(k int, p string) bool {
	if k < 0 || k >= len(b.toks) || b.toks[k].kind != 'p' {
		return false
	}
	s := b.s(k)
	return s == p || p == "." && s == "?."
}

// assigns says whether the = at k assigns (not ==, ===, !=, <=, >=, =>).
func (b *jsBinder) assigns(k int) bool {
	t := b.toks[k]
	if k+1 < len(b.toks) && b.toks[k+1].at == t.end && (b.is(k+1, "=") || b.is(k+1, ">")) {
		return false
	}
	if k == 0 {
		return false
	}
	p := b.toks[k-1]
	return !(p.end == t.at && (b.is(k-1, "=") || b.is(k-1, "!") || b.is(k-1, "<") || b.is(k-1, ">")))
}

// targets are the names the target ending at token k binds: a name (not a property's), or
// every name of a destructuring pattern ([a, BASE], { BASE, x: y }).
func (b *jsBinder) targets(k int) []string {
	for k >= 0 && k+1 < len(b.toks) && b.toks[k].kind == 'p' && b.toks[k].end-b.toks[k].at == 1 &&
		strings.Contains("+-*/%&|^?", b.s(k)) && b.toks[k].end == b.toks[k+1].at {
		k-- // BASE += …: the operator's part
	}
	switch {
	case k < 0:
		return nil
	case b.toks[k].kind == 'i':
		if b.is(k-1, ".") {
			return nil
		}
		return []string{b.s(k)}
	case b.is(k, "]") || b.is(k, "}"):
		var out []string
		depth := 0
		for j := k; j >= 0 && b.work > 0; j-- {
			b.work--
			switch {
			case b.is(j, "]") || b.is(j, "}") || b.is(j, ")"):
				depth++
			case b.is(j, "[") || b.is(j, "{") || b.is(j, "("):
				depth--
			case b.toks[j].kind == 'i' && !b.is(j-1, "."):
				out = append(out, b.s(j))
			}
			if depth == 0 {
				return out
			}
		}
		return out
	}
	return nil
}

// bind records for n the value starting at token k: to a , ; or closing bracket at its depth,
// or a line's end where a new statement begins. Past the work bound, the value is not read.
func (b *jsBinder) bind(n string, k int) {
	if k >= len(b.toks) {
		return
	}
	depth, e := 0, k
	for ; e < len(b.toks); e++ {
		if b.work--; b.work < 0 {
			b.out[n] = append(b.out[n], jsUnread)
			return
		}
		if b.toks[e].kind == 'p' {
			switch b.s(e) {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				depth--
			}
			if depth < 0 || depth == 0 && (b.is(e, ",") || b.is(e, ";")) {
				break
			}
		}
		if e > k && depth == 0 && b.newStatement(e) {
			break
		}
	}
	if e > k {
		b.out[n] = append(b.out[n], b.text[b.toks[k].at:b.toks[e-1].end])
	}
}

// newStatement says whether token e starts a statement on a new line (automatic semicolon
// insertion): after a name, a literal or a closing bracket, a name or a literal.
func (b *jsBinder) newStatement(e int) bool {
	p, t := b.toks[e-1], b.toks[e]
	if !strings.Contains(b.text[p.end:t.at], "\n") || t.kind != 'i' && t.kind != 's' {
		return false
	}
	return p.kind == 'i' || p.kind == 's' || p.kind == 'r' || b.is(e-1, ")") || b.is(e-1, "]") || b.is(e-1, "}")
}

// forOf binds a for-of or for-in's names (at the ( at k) to what it iterates.
func (b *jsBinder) forOf(k int) {
	depth := 0
	for j := k; j < len(b.toks) && b.work > 0; j++ {
		b.work--
		switch {
		case b.is(j, "(") || b.is(j, "[") || b.is(j, "{"):
			depth++
		case b.is(j, ")") || b.is(j, "]") || b.is(j, "}"):
			depth--
			if depth == 0 {
				return
			}
		case depth == 1 && (b.word(j, "of") || b.word(j, "in")):
			for _, n := range b.targets(j - 1) {
				b.bind(n, j+1)
			}
			return
		}
	}
}
