package wslayer

import (
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
)

// The follower found a load only by its spelling (attack round atk39b, F3): `require(` and
// `import(` with a literal, `from '…'`; 17 of 17 other spellings node runs were skipped with no
// judgement (`require/**/('./a')`, `(0, require)('./a')`, `const r = require`, createRequire,
// `require.call`, `requ\u0069re`, fork, `new Worker`, a comment before a `from` literal), and a
// call's rewrite of what they load ran on the host. The scan is now the other way round: it
// reads the program as tokens (comments skipped, strings, templates and regular expressions
// as literals), and every mention of a loader or of a runner of code (require, import,
// createRequire, Module's _load, fork, Worker, vm, eval, Function, a child process of node)
// is either resolved exactly (a literal, a computed argument computed() judges) or is a
// mention the check does not resolve: the program's package whole (at the workspace's root:
// not judged, runCut). An identifier written with an escape (`\u0069`) is such a mention.

// jsTok is a token of a JS text.
type jsTok struct {
	kind    byte   // 'i' identifier or keyword, 's' string or template part, 'r' regular expression, 'p' punctuation, 0 the end
	s       string // the identifier, the punctuation, a literal string's value
	lit     bool   // a string: one plain literal (no escape, no ${…}, one line), s its value
	esc     bool   // an identifier written with a \ escape
	at, end int
}

// jsLex reads a JS (or TypeScript) text's tokens.
type jsLex struct {
	text  string
	i     int
	prevK byte // the last token's kind and text: whether a / starts a regular expression
	prevS string
	depth int   // braces open
	tmpl  []int // the brace depth of each template's ${ open
}

// regexAfter are the keywords after which a / starts a regular expression.
var regexAfter = map[string]bool{"return": true, "typeof": true, "instanceof": true, "in": true, "of": true, "new": true,
	"delete": true, "void": true, "throw": true, "case": true, "do": true, "else": true, "yield": true, "await": true}

func (l *jsLex) clone() *jsLex {
	c := *l
	c.tmpl = slices.Clone(l.tmpl)
	return &c
}

func (l *jsLex) next() jsTok {
	t := l.read()
	l.prevK, l.prevS = t.kind, t.s
	return t
}

func (l *jsLex) read() jsTok {
	text := l.text
	if l.i == 0 && strings.HasPrefix(text, "#!") {
		l.i = strings.IndexByte(text, '\n') // the #! line
		if l.i < 0 {
			l.i = len(text)
		}
	}
	l.skip()
	at := l.i
	if at >= len(text) {
		return jsTok{at: at, end: at}
	}
	c := text[at]
	switch {
	case c == '\'' || c == '"':
		lit := true
		j := at + 1
		for ; j < len(text) && text[j] != c && text[j] != '\n'; j++ {
			if text[j] == '\\' {
				lit = false
				j++
			}
		}
		if j >= len(text) || text[j] != c {
			lit = false
		}
		l.i = min(j+1, len(text))
		return jsTok{kind: 's', s: text[at+1 : min(j, len(text))], lit: lit && j-at < 4096, at: at, end: l.i}
	case c == '`':
		return l.template(at, at+1, true)
	case c == '}' && len(l.tmpl) > 0 && l.depth == l.tmpl[len(l.tmpl)-1]:
		l.tmpl = l.tmpl[:len(l.tmpl)-1]
		return l.template(at, at+1, false)
	case isWord(c) || c == '\\':
		j, esc := at, false
		for j < len(text) && (isWord(text[j]) || text[j] == '\\') {
			if text[j] == '\\' {
				esc = true
				if j+1 < len(text) && text[j+1] == 'u' && j+2 < len(text) && text[j+2] == '{' {
					if e := strings.IndexByte(text[j:], '}'); e > 0 {
						j += e
					}
				}
			}
			j++
		}
		l.i = j
		return jsTok{kind: 'i', s: text[at:j], esc: esc, at: at, end: j}
	case c == '/' && l.regexOK():
		return l.regex(at)
	case c == '?' && at+1 < len(text) && text[at+1] == '.' && !(at+2 < len(text) && text[at+2] >= '0' && text[at+2] <= '9'):
		l.i = at + 2
		return jsTok{kind: 'p', s: ".", at: at, end: l.i} // optional chaining: a member all the same
	case c == '.' && strings.HasPrefix(text[at:], "..."):
		l.i = at + 3
		return jsTok{kind: 'p', s: "...", at: at, end: l.i}
	}
	switch c {
	case '{':
		l.depth++
	case '}':
		l.depth--
	}
	l.i = at + 1
	return jsTok{kind: 'p', s: text[at : at+1], at: at, end: l.i}
}

// skip goes past white space and comments.
func (l *jsLex) skip() {
	text := l.text
	for l.i < len(text) {
		c := text[l.i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			l.i++
			continue
		case c == '/' && l.i+1 < len(text) && text[l.i+1] == '/':
			if e := strings.IndexByte(text[l.i:], '\n'); e >= 0 {
				l.i += e
			} else {
				l.i = len(text)
			}
			continue
		case c == '/' && l.i+1 < len(text) && text[l.i+1] == '*':
			if e := strings.Index(text[l.i+2:], "*/"); e >= 0 {
				l.i += e + 4
			} else {
				l.i = len(text)
			}
			continue
		}
		break
	}
}

// regex reads a regular expression literal from text[at], its flags too.
func (l *jsLex) regex(at int) jsTok {
	text := l.text
	inClass := false
	j := at + 1
	for ; j < len(text) && text[j] != '\n'; j++ {
		switch text[j] {
		case '\\':
			j++
		case '[':
			inClass = true
		case ']':
			inClass = false
		case '/':
			if !inClass {
				for j++; j < len(text) && isWord(text[j]); j++ { // its flags
				}
				l.i = j
				return jsTok{kind: 'r', at: at, end: j}
			}
		}
	}
	if !mutated("workspace-js-regex-end") {
		j = min(j, len(text)) // a `\` last skipped past the end: a token past the text (a panic, atk45a F3's class)
	}
	l.i = j
	return jsTok{kind: 'r', at: at, end: j}
}

// template reads a template's part from text[j] to its closing ` (then the template, a
// literal when whole and plain) or to a ${ (then the code that follows is read as code).
func (l *jsLex) template(at, j int, whole bool) jsTok {
	text := l.text
	lit := whole
	for ; j < len(text); j++ {
		switch {
		case text[j] == '\\':
			lit = false
			j++
		case text[j] == '`':
			l.i = j + 1
			return jsTok{kind: 's', s: text[min(at+1, j):j], lit: lit && j-at < 4096 && !strings.Contains(text[at:j], "\n"), at: at, end: l.i}
		case text[j] == '$' && j+1 < len(text) && text[j+1] == '{':
			l.tmpl = append(l.tmpl, l.depth) // its } is the one at this depth
			l.i = j + 2
			return jsTok{kind: 's', at: at, end: l.i}
		}
	}
	l.i = len(text)
	return jsTok{kind: 's', at: at, end: l.i}
}

// regexOK: a / here starts a regular expression (after an operator, an opening, a keyword),
// not a division (after a name, a number, a closing parenthesis or bracket).
func (l *jsLex) regexOK() bool {
	switch l.prevK {
	case 0:
		return true
	case 'i':
		return regexAfter[l.prevS]
	case 'p':
		return l.prevS != ")" && l.prevS != "]"
	}
	return false
}

// jsRunners run a child process: of node (or another runtime) with a workspace file, what
// that file loads runs as the program's own does.
var jsRunners = map[string]bool{"spawn": true, "spawnSync": true, "exec": true, "execSync": true, "execFile": true,
	"execFileSync": true, "execa": true, "execaSync": true}

// jsCodeRunners load or run code by another way than require and import: not resolved.
var jsCodeRunners = map[string]bool{"createRequire": true, "_load": true, "_resolveFilename": true, "_compile": true,
	"_extensions": true, "dlopen": true, "runInThisContext": true, "runInNewContext": true, "runInContext": true,
	"compileFunction": true, "SourceTextModule": true, "eval": true, "execaNode": true, "importScripts": true}

// jsRunsScript: a child process's arguments (their text) may run a script of the workspace.
func jsRunsScript(arg string) bool {
	if arg == "" {
		return true // not read within jsArgMax: not judged
	}
	for _, w := range []string{"node", "execPath", "argv", "__dirname", "__filename", "import.meta", ".js", ".mjs", ".cjs", ".ts",
		"tsx", "bun", "deno", "npx", "npm", "pnpm", "yarn", "python", ".py", ".sh", "bash"} {
		if strings.Contains(arg, w) {
			return true
		}
	}
	return false
}

// jsRefs yields what a JS text loads: a literal specifier (require, import, `from`, a file
// fork or new Worker runs), a computed argument (computed()), and each mention of a loader or a
// runner of code it does not resolve (ref.mention names it).
func jsRefs(text string, yield func(jsRef) bool) {
	l := &jsLex{text: text}
	var p1, p2 jsPrev // the two tokens before
	for {
		t := l.next()
		if t.kind == 0 {
			return
		}
		if t.kind == 'i' && (t.esc || jsWatched(t.s)) {
			if r, ok := jsJudge(l, t, p1, p2); ok && !yield(r) {
				return
			}
		}
		p2, p1 = p1, jsPrev{t.kind, t.s}
	}
}

// jsPrev is a token before the one judged: its kind and text.
type jsPrev struct {
	kind byte
	s    string
}

// jsWatched: the identifiers jsJudge looks at (a switch: each identifier of 64 MiB of
// programs is asked).
func jsWatched(w string) bool {
	switch w {
	case "require", "import", "from", "vm", "Function", "fork", "Worker",
		"spawn", "spawnSync", "exec", "execSync", "execFile", "execFileSync", "execa", "execaSync",
		"createRequire", "_load", "_resolveFilename", "_compile", "_extensions", "dlopen", "runInThisContext",
		"runInNewContext", "runInContext", "compileFunction", "SourceTextModule", "eval", "execaNode", "importScripts":
		return true
	}
	return false
}

// jsMention is a mention of a loader the scan does not resolve.
func jsMention(why string) (jsRef, bool) { return jsRef{mention: why}, true }

// jsJudge judges the identifier t (after p1, p2): a reference when it loads or runs code.
func jsJudge(l *jsLex, t jsTok, p1, p2 jsPrev) (jsRef, bool) {
	member := p1.kind == 'p' && p1.s == "."
	if t.esc {
		if mutated("workspace-follow-loader-mention") {
			return jsRef{}, false
		}
		return jsMention("an identifier written with a \\ escape (" + clip(t.s) + ")")
	}
	switch w := t.s; {
	case w == "require":
		if p1.kind == 'i' && p1.s == "typeof" {
			return jsRef{}, false // a test of the environment
		}
		la := l.clone()
		n := la.next()
		switch {
		case n.kind == 'p' && n.s == "(":
			return jsCall(l, la, n, false)
		case n.kind == 'p' && n.s == ".":
			switch m := la.next(); {
			case m.kind == 'i' && m.s == "resolve":
				if o := la.next(); o.kind == 'p' && o.s == "(" {
					return jsCall(l, la, o, false) // what it names: followed as a load
				}
			case m.kind == 'i' && (m.s == "main" || m.s == "cache"):
				return jsRef{}, false // require.main === module; a require through it is its own mention
			}
		}
		if mutated("workspace-follow-loader-mention") {
			return jsRef{}, false
		}
		return jsMention("require used otherwise than called with a name (" + jsAround(l.text, t) + ")")
	case w == "import":
		if member {
			return jsRef{}, false // db.import(…): a property, not the keyword
		}
		return jsImport(l, t)
	case w == "from":
		if n := l.clone().next(); n.kind == 's' && n.lit {
			return jsRef{spec: n.s}, true // export … from '…'
		}
		return jsRef{}, false
	case mutated("workspace-follow-loader-mention"):
		return jsRef{}, false
	case jsCodeRunners[w] || w == "vm" && !member:
		return jsMention(w + ", a loader or runner of code the check does not resolve")
	case w == "Function":
		n := l.clone().next()
		if n.kind == 'p' && n.s == "." || p1.kind == 'p' && p1.s == ":" || p1.kind == 'i' && p1.s == "instanceof" {
			return jsRef{}, false // Function.prototype, a type
		}
		return jsMention("Function, code made from a string")
	case w == "fork" || w == "Worker" || jsRunners[w]:
		la := l.clone()
		n := la.next()
		if n.kind == 'p' && n.s == "(" {
			if w == "fork" || w == "Worker" {
				return jsCall(l, la, n, true)
			}
			if jsRunsScript(jsArg(l.text, n.end)) {
				return jsMention(w + "(…), a child process that may run a script (" + jsAround(l.text, t) + ")")
			}
			return jsRef{}, false
		}
		if p1.kind == 'p' && (p1.s == "{" || p1.s == ",") && n.kind == 'p' && (n.s == "}" || n.s == ",") {
			return jsRef{}, false // { fork } = require('child_process'): its calls are judged
		}
		if member && !(n.kind == 'p' && (n.s == "=" || n.s == ",")) && !(p2.kind == 'i' && p2.s == "this") {
			return jsRef{}, false // cp.exec used as a name, re.exec: calls judged where they are made
		}
		return jsMention(w + " used otherwise than called (" + jsAround(l.text, t) + ")")
	}
	return jsRef{}, false
}

// jsImport judges the keyword import at t: import(…), import.meta, import '…', a statement
// ending in from '…'; any other form is a mention.
func jsImport(l *jsLex, t jsTok) (jsRef, bool) {
	la := l.clone()
	n := la.next()
	switch {
	case n.kind == 'p' && n.s == "(":
		return jsCall(l, la, n, false)
	case n.kind == 'p' && n.s == ".":
		if m := la.next(); m.kind == 'i' && m.s == "meta" {
			return jsRef{}, false // import.meta.url
		}
	case n.kind == 's' && n.lit:
		return jsRef{spec: n.s}, true // import './x'
	case n.kind == 'i' || n.kind == 'p' && (n.s == "{" || n.s == "*"):
		// import a, { b as c }, * as d from '…'; import type …; import x = require(…)
		// A clause's names are apart (a comma, braces, as): two names in a row end it, or
		// `import import …` looked 4,096 tokens ahead from each (review41 #9, quadratic).
		var prev jsTok
		for k, m := 0, n; k < 4096 && m.kind != 0; k, m, prev = k+1, la.next(), m {
			if m.kind == 'i' && prev.kind == 'i' && m.s != "from" && !clauseWord[prev.s] && !clauseWord[m.s] && !mutated("workspace-js-import-lookahead") {
				break
			}
			if m.kind == 'i' && m.s == "from" {
				if s := la.next(); s.kind == 's' && s.lit {
					return jsRef{spec: s.s}, true
				}
				break
			}
			if k == 1 && m.kind == 'p' && m.s == "=" {
				return jsRef{}, false // TypeScript's import x = require('…'): the require is judged
			}
			if m.kind != 'i' && !(m.kind == 's' && m.lit) && !(m.kind == 'p' && strings.Contains("{},*", m.s)) {
				break
			}
		}
	}
	if mutated("workspace-follow-loader-mention") {
		return jsRef{}, false
	}
	return jsMention("import in a form the check does not read (" + jsAround(l.text, t) + ")")
}

// clauseWord are the words an import clause holds beside a name: `import type X`, `* as y`,
// Flow's typeof, the proposals' defer and source phases.
var clauseWord = map[string]bool{"as": true, "type": true, "typeof": true, "defer": true, "source": true}

// jsCall reads a call's argument after its "(" (la, a look-ahead of l, just past it): a plain
// literal names the specifier (l then goes on past it: it holds no name); anything else is a
// computed argument (its text; not read within jsArgMax: a mention).
func jsCall(l, la *jsLex, open jsTok, runs bool) (jsRef, bool) {
	n := la.next()
	if n.kind == 'p' && n.s == ")" {
		return jsRef{}, false
	}
	if n.kind == 's' && n.lit {
		if e := la.next(); e.kind == 'p' && (e.s == ")" || e.s == ",") {
			*l = *la
			return jsRef{spec: n.s, runs: runs}, true
		}
	}
	arg := jsArg(la.text, open.end)
	if arg == "" {
		return jsMention("a load whose argument the check does not read (" + jsAround(la.text, open) + ")")
	}
	return jsRef{arg: arg, computed: true, runs: runs}, true
}

// jsAround is the text at a token, clipped, for a reason.
func jsAround(text string, t jsTok) string {
	s := text[t.at:min(len(text), t.at+60)]
	if e := strings.IndexByte(s, '\n'); e >= 0 {
		s = s[:e]
	}
	return strings.TrimSpace(s)
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// dirEntry reads what a directory a program loads runs first (protected whole already): its
// package.json's "main", which may lead out of it (atk39b F3: "main": "../plugins/a.js" was
// never read nor protected), its index, a Python package's __init__.py.
func (f *follower) dirEntry(t todoFile) {
	in := func(p string) { f.todo = append(f.todo, todoFile{p, t.by, t.depth + 1}) }
	in(filepath.Join(t.path, "__init__.py"))
	for _, e := range jsExts[1:] {
		in(filepath.Join(t.path, "index"+e))
	}
	pj := filepath.Join(t.path, "package.json")
	if !regular(pj) {
		return
	}
	b, cut, err := readSmall(pj, maxProgramFile)
	f.reads++
	f.bytes += len(b)
	var v struct{ Main any }
	if err != nil || cut || json.Unmarshal(b, &v) != nil {
		return // node refuses the directory: nothing loads
	}
	if m, _ := v.Main.(string); m != "" {
		f.jsFile(t, absFrom(t.path, m), true) // out of the directory too: protected and read
	}
}
