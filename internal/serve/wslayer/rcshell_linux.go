package wslayer

import (
	"path"
	"slices"
	"strings"
)

// An .envrc (and what it sources, a mise hook or task) is a bash program: its words are read
// as bash splits them (quotes removed, `$(…)` and backquotes their own statements), so a value
// in quotes (`export NODE_OPTIONS="--require $PWD/hooks/x.cjs"`) is one word, and a variable
// the program assigned is known where it is used (atk40b F3). What bash would compute at run
// time (a command's output, an unknown variable) stays in the word as an unresolved `$`.

// unresolvedSub stands for what a command substitution prints: never resolved.
const unresolvedSub = "${?}"

// Bounds of the reading: a huge .envrc costs its length once (the follower's read bounds
// already bound the text); a nested `$(…)` past maxShellNest, a variable past maxShellVars or a
// value past maxShellValue is unresolved (fail closed where that matters).
const (
	maxShellNest  = 16
	maxShellVars  = 1024
	maxShellValue = 4096
	// maxShellExpand bounds the bytes one program's expansions make
	maxShellExpand = 16 << 20
)

// shellStatements splits the bash text into statements of words.
func shellStatements(text string) [][]string {
	r := &shellReader{}
	r.read(strings.ReplaceAll(text, "\\\n", ""), 0)
	return r.stmts
}

type shellReader struct {
	stmts [][]string
	piped bool // the statement being read is fed by a pipe (`a | b`: b's)
}

// read reads text (at nesting depth) into r.stmts; the statements of a substitution come before
// the one it is in.
func (r *shellReader) read(text string, depth int) {
	var (
		stmt   []string
		word   strings.Builder
		inWord bool
	)
	endWord := func() {
		if inWord {
			stmt = append(stmt, word.String())
		}
		word.Reset()
		inWord = false
	}
	endStmt := func() {
		endWord()
		r.end(stmt)
		stmt = nil
	}
	sub := func(inner string) {
		inWord = true
		r.sub(inner, depth, &word)
	}
	quote := byte(0)
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
			continue
		case c == '\\' && i+1 < len(text):
			i++
			word.WriteByte(text[i])
			inWord = true
			continue
		case c == '$' && i+1 < len(text) && (text[i+1] == '\'' || text[i+1] == '"') && !mutated("workspace-follow-envrc-quotes"):
			// bash's $'…' (ANSI-C: escapes decoded) and $"…" (a translated "…") are quotes,
			// not a variable (atk41 F1)
			if text[i+1] == '"' {
				continue
			}
			var v string
			v, i = ansiQuote(text, i)
			word.WriteString(v)
			inWord = true
			continue
		case c == '$' && i+1 < len(text) && text[i+1] == '(' && !(i+2 < len(text) && text[i+2] == '('):
			j := closing(text, i+1)
			sub(text[i+2 : j])
			i = j
			continue
		case c == '`':
			j := strings.IndexByte(text[i+1:], '`')
			if j < 0 {
				j = len(text) - i - 1
			}
			sub(text[i+1 : i+1+j])
			i += j + 1
			continue
		case quote == '"':
			if c == '"' {
				quote = 0
			} else {
				word.WriteByte(c)
			}
			continue
		}
		switch c {
		case '\'', '"':
			quote = c
			inWord = true
		case ' ', '\t', '\r':
			endWord()
		case '&':
			if !ampRedirect(text, i, &stmt, &word, &inWord) {
				endStmt()
			}
		case '\n', ';', '|', '(', ')':
			endStmt()
			r.piped = r.piped || c == '|' && pipeAt(text, &i) // `a | ( b )`, `a |⏎ b`: b's
		case '#':
			if inWord {
				word.WriteByte(c)
				continue
			}
			for i < len(text) && text[i] != '\n' {
				i++
			}
			endStmt()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endStmt()
}

// ansiQuote decodes the $'…' at text[i]: its value and the index of its closing quote.
func ansiQuote(text string, i int) (string, int) {
	j := i + 2
	for j < len(text) && text[j] != '\'' {
		if text[j] == '\\' {
			j++
		}
		j++
	}
	return decodeLiteral(text[i+2:min(j, len(text))], false), j
}

// sub reads a substitution's text into word: `pwd` is the directory, `expand_path X` X from
// it, anything else its own statements and an unresolved value here.
func (r *shellReader) sub(inner string, depth int, word *strings.Builder) {
	in := strings.TrimSpace(inner)
	fs := strings.Fields(in)
	switch {
	case in == "pwd" || in == "pwd -P" || in == "pwd -L":
		word.WriteString("$PWD")
		return
	case len(fs) >= 2 && fs[0] == "expand_path" && !strings.ContainsAny(fs[1], "$`\"'"):
		if !strings.HasPrefix(fs[1], "/") {
			word.WriteString("$PWD/")
		}
		word.WriteString(fs[1])
		return
	}
	if depth >= maxShellNest {
		word.WriteString(unresolvedSub)
		return
	}
	in2 := &shellReader{}
	in2.read(inner, depth+1)
	if v, ok := subValue(in2.stmts); ok && !mutated("workspace-follow-shell-self") {
		word.WriteString(v)
		return
	}
	r.stmts = append(r.stmts, in2.stmts...)
	word.WriteString(unresolvedSub)
}

// selfDir is the variable standing for the directory of the program being read (bash's
// `dirname "$0"`, `dirname "${BASH_SOURCE[0]}"`): a shell script's own, an .envrc's.
const selfDir = "__MCPS_SELF_DIR"

// gitTop is the variable standing for `git rev-parse --show-toplevel`: the workspace when it is
// a repository's root (shellWalk), else unset (unresolved).
const gitTop = "__MCPS_GIT_TOP"

// paramDir starts the variables standing for `dirname "$1"` … `dirname "$9"`: the directory of a
// nested code's parameter (`find … -exec sh -c 'cd "$(dirname "$1")" && …' _ {} \;`).
const paramDir = "__MCPS_PARAM_DIR"

// selfWords are the words that name the program being read.
var selfWords = map[string]bool{"$0": true, "${0}": true, "$BASH_SOURCE": true, "${BASH_SOURCE}": true, "${BASH_SOURCE[0]}": true}

// selfTrims are the expansions that cut the script's name off its path: its directory.
var selfTrims = map[string]bool{"0%/*": true, "BASH_SOURCE%/*": true, "BASH_SOURCE[0]%/*": true}

// subValue is what a substitution of the statements stmts prints when the reader knows it: the
// program's directory (`dirname "$0"`), a literal path's directory, a directory changed into
// and printed (`cd "$(dirname "$0")/.." && pwd`), a path made absolute (realpath X).
func subValue(stmts [][]string) (string, bool) {
	var ws [][]string
	for _, st := range stmts {
		var kept []string
		for i := 0; i < len(st); i++ {
			w := st[i]
			if op, ok := redirection(w); ok {
				if op == w && !mutated("workspace-shell-redirects") {
					i++ // `> /dev/null`: the file is the redirection's, not an argument
				}
				continue
			}
			if w == "--" || w == "-P" || w == "-L" || w == "-f" || w == "-e" || w == "-m" {
				continue // an option that does not change what is printed
			}
			kept = append(kept, w)
		}
		ws = append(ws, kept)
	}
	switch {
	case len(ws) == 1 && len(ws[0]) == 2 && ws[0][0] == "dirname":
		x := ws[0][1]
		switch {
		case selfWords[x]:
			return "$" + selfDir, true
		case x == "$"+selfDir || x == "${"+selfDir+"}":
			return x + "/..", true
		case len(x) == 2 && x[0] == '$' && x[1] >= '1' && x[1] <= '9' && !mutated("workspace-config-shell-positional"):
			// a nested code's parameter's directory, known where the code was given it (params)
			return "${" + paramDir + x[1:] + "}", true
		case !strings.Contains(x, "$"):
			return path.Dir(x), true
		}
	case len(ws) == 1 && len(ws[0]) == 2 && (ws[0][0] == "realpath" || ws[0][0] == "readlink"):
		if selfWords[ws[0][1]] && !mutated("workspace-shell-self-forms") {
			return "$0", true // the script, for the dirname around it (atk42 F4)
		}
		return ws[0][1], !strings.HasPrefix(ws[0][1], "$") || strings.HasPrefix(ws[0][1], "$"+selfDir)
	case len(ws) == 1 && slices.Equal(ws[0], []string{"git", "rev-parse", "--show-toplevel"}) && !mutated("workspace-shell-idioms"):
		return "$" + gitTop, true // the repository's root: known when it is the workspace (atk42 F4)
	case len(ws) == 2 && len(ws[0]) == 2 && ws[0][0] == "cd" && len(ws[1]) == 1 && ws[1][0] == "pwd":
		x := ws[0][1]
		if !strings.HasPrefix(x, "/") && !strings.HasPrefix(x, "$") {
			x = "$PWD/" + x
		}
		return x, !strings.HasPrefix(x, "$") || strings.HasPrefix(x, "$PWD") || strings.HasPrefix(x, "$"+selfDir)
	}
	return "", false
}

// ampRedirect reads the & at text[i] into the statement when it is part of a redirection: &>
// and &>> (both streams to a file) start a word, >&2 and 2>&1 (a stream to another) go on one;
// only a lone & ends a statement (atk42 F4: the canonical `cd … &> /dev/null && pwd` was cut
// in three).
func ampRedirect(text string, i int, stmt *[]string, word *strings.Builder, inWord *bool) bool {
	if mutated("workspace-shell-redirects") {
		return false
	}
	w := word.String()
	switch {
	case i+1 < len(text) && text[i+1] == '>':
		if *inWord {
			*stmt = append(*stmt, w)
			word.Reset()
		}
	case !*inWord || !strings.HasSuffix(w, ">") && !strings.HasSuffix(w, "<"):
		return false
	}
	word.WriteByte('&')
	*inWord = true
	return true
}

// redirection says whether w is a redirection (`>f`, `2>&1`, `&> f`, `<in`) and returns its
// operator: all of w when the file is the next word.
func redirection(w string) (op string, ok bool) {
	rest := strings.TrimLeft(w, "0123456789")
	if !strings.HasPrefix(rest, ">") && !strings.HasPrefix(rest, "<") && !strings.HasPrefix(rest, "&>") {
		return "", false
	}
	end := len(w) - len(strings.TrimLeft(rest, "<>&|")) // 2>&1: "2>&", its stream in w
	return w[:end], true
}

// closing is the index of the ')' that closes the '(' at open (quotes skipped), or the text's
// length when none does: the substitution runs to the end (its last byte was the index, so an
// unclosed `$(` last in a hook's command sliced past its start: a panic, atk45a F3's class).
func closing(text string, open int) int {
	depth := 0
	quote := byte(0)
	for i := open; i < len(text); i++ {
		c := text[i]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			} else if c == '\\' && quote == '"' {
				i++
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\\':
			i++
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	if mutated("workspace-shell-subst-unclosed") {
		return len(text) - 1
	}
	return len(text)
}

// shellVars are the variables a shell program assigned, as far as the reader knows them, and
// what is left of the bytes their expansion may make (maxShellExpand: `$a $a $a …` with a long
// $a would make the text's length times maxShellValue).
type shellVars struct {
	m      map[string]string
	budget int
	// steps counts the statements walked, loops unrolled (maxShellSteps)
	steps int
	// unknown are the names the program assigns by a statement the reader does not model
	// (for, read, mapfile, printf -v, declare -n): never resolved, never the user's own
	unknown map[string]bool
	// opaque: the program sources a file or evals a string, which may set any name: no
	// ${NAME:-default} is taken for its default
	opaque bool
	// took are the names whose default the walk took (lateDefaults)
	took map[string]bool
	// exported are the names a config's line exports to what it runs, allexport its `set -a`
	// (configenv_linux.go)
	exported  map[string]bool
	allexport bool
	// raw is the statement being visited as the reader split it, unexpanded (shellRun)
	raw []string
	// positional: m holds the positional parameters ("0", "1", …) a nested code was given
	// (`sh -c CODE _ server`); started: the code is a started script's (its cd fails closed
	// where it cannot be placed, as the script's own); loopPats are the patterns a config
	// line's loop binds a name to (`for f in hooks.d/*`), looping how deep in loops it is
	// (configloop_linux.go)
	positional, started bool
	loopPats            []string
	looping             int
}

func newShellVars(dir string) *shellVars {
	return &shellVars{m: map[string]string{"PWD": dir, "DIRENV_DIR": dir, selfDir: dir}, budget: maxShellExpand}
}

// shellKeywords are the words that start a statement before its command.
var shellKeywords = map[string]bool{"do": true, "then": true, "else": true, "elif": true, "if": true, "while": true,
	"until": true, "!": true, "{": true, "}": true, "time": true, "command": true, "builtin": true}

// command is the index of the statement's command word (after keywords), len(words) when none.
func command(words []string) int {
	k := 0
	for k < len(words) && shellKeywords[words[k]] {
		k++
	}
	return k
}

// unmodeled finds the names the statements assign by what the reader does not model (atk41
// F1: `for D in tools`, `read -r TOOLS`, mapfile, printf -v, declare -n made an upper-case
// name the reader took for the user's environment) and marks them unknown.
func (vars *shellVars) unmodeled(stmts [][]string) {
	if mutated("workspace-follow-envrc-unmodeled") {
		return
	}
	mark := func(w string) {
		n, _, _ := strings.Cut(w, "=")
		if n != "" && !strings.HasPrefix(n, "-") && strings.IndexFunc(n, func(r rune) bool { return r > 127 || !isNameByte(byte(r), 1) }) < 0 {
			if vars.unknown == nil {
				vars.unknown = map[string]bool{}
			}
			vars.unknown[n] = true
			vars.m[n] = unresolvedSub
		}
	}
	for _, st := range stmts {
		k := command(st)
		for k < len(st) && !mutated("workspace-shell-default-declare") {
			if _, _, ok := assignment(st[k]); !ok {
				break
			}
			k++ // IFS== read -r APP_DIR: read's names, after its environment's (atk44a F1)
		}
		if k >= len(st) {
			continue
		}
		args := st[k+1:]
		switch st[k] {
		case "for", "select":
			if len(args) > 0 {
				mark(args[0])
			}
		case "read", "mapfile", "readarray", "getopts", "let", "unset":
			for _, a := range args {
				mark(a)
			}
		case "printf":
			for i, a := range args {
				if a == "-v" && i+1 < len(args) {
					mark(args[i+1])
				}
			}
		case "declare", "typeset", "local", "export", "readonly":
			// -n: a name reference (export's -n un-exports, assigning nothing)
			if st[k] != "export" && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-") && strings.Contains(a, "n") }) {
				for _, a := range args {
					mark(a)
				}
			}
		}
	}
}

// expand replaces the variables in w that vars know ($NAME, ${NAME}, ${NAME:-…}: the value
// known); the others stay, unresolved, and all of them past the budget.
func (vars *shellVars) expand(w string) string {
	if !strings.Contains(w, "$") || vars.budget <= 0 {
		return w
	}
	var b strings.Builder
	for i := 0; i < len(w); i++ {
		if w[i] != '$' || i+1 == len(w) {
			b.WriteByte(w[i])
			continue
		}
		var name string
		var end int
		assign := false
		if w[i+1] == '{' {
			j := strings.IndexByte(w[i:], '}')
			if j < 0 {
				b.WriteString(w[i:])
				break
			}
			inner := w[i+2 : i+j]
			end = i + j + 1
			if selfTrims[inner] && !mutated("workspace-shell-self-forms") {
				b.WriteString(vars.m[selfDir]) // ${0%/*}: the script's directory (atk42 F4)
				i = end - 1
				continue
			}
			if v, ok := vars.paramOp(inner); ok {
				b.WriteString(v) // ${CLAUDE_PROJECT_DIR%/}, ${V:?}: the value (atk46a F1)
				i = end - 1
				continue
			}
			n := vars.positionalLen(inner) // ${1}, ${1:-d}
			for named := n == 0; named && n < len(inner) && isNameByte(inner[n], n); {
				n++
			}
			if n == len(inner) || n > 0 && strings.HasPrefix(inner[n:], ":-") || n > 0 && strings.HasPrefix(inner[n:], "-") {
				name = inner[:n]
			}
			if n > 0 && (strings.HasPrefix(inner[n:], ":=") || strings.HasPrefix(inner[n:], "=")) && !mutated("workspace-shell-assign-default") {
				name, assign = inner[:n], true // : "${SRV:=server}": the default, assigned (atk49a F8)
			}
			if alt, ok := strings.CutPrefix(inner[n:], ":+"); ok && n > 0 && !strings.Contains(alt, "{") && !mutated("workspace-follow-envrc-fail-closed") {
				// ${NAME:+alt}: alt or nothing; alt's words are what it may load (${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:})
				if v, known := vars.m[inner[:n]]; !known || v != "" {
					b.WriteString(vars.expand(alt))
				}
				i = end - 1
				continue
			}
		} else if n := vars.positionalLen(w[i+1 : i+2]); n > 0 {
			name, end = w[i+1:i+2], i+2 // $1: the nested code's parameter (atk49a F3)
		} else {
			j := i + 1
			for j < len(w) && isNameByte(w[j], j-i-1) {
				j++
			}
			name, end = w[i+1:j], j
		}
		if def, ok := defaultValue(w[i:end], name, vars); ok {
			if vars.took == nil {
				vars.took = map[string]bool{}
			}
			vars.took[name] = true
			v := vars.expand(def)
			if assign {
				vars.set(name, v) // ${V:=d}, ${V=d}: V is d from here on
			}
			b.WriteString(v) // ${V:-d} with V not set by the program: d (atk42 F4)
			i = end - 1
			continue
		}
		if v, ok := vars.m[name]; ok && name != "" {
			if b.Len()+len(v) > maxShellValue {
				b.WriteString(unresolvedSub) // past the bound: what the rest makes is not known
				break
			}
			b.WriteString(v)
			i = end - 1
			continue
		}
		b.WriteByte('$')
	}
	vars.budget -= b.Len()
	return b.String()
}

// set records name's value (past the bounds: unresolved).
func (vars *shellVars) set(name, value string) {
	if vars.unknown[name] {
		return
	}
	if len(value) > maxShellValue {
		value = unresolvedSub
	}
	if _, ok := vars.m[name]; ok || len(vars.m) < maxShellVars {
		vars.m[name] = value
	}
}

// positionalLen is the length of the positional parameter's number that s starts with, when
// vars holds a nested code's parameters (0: none).
func (vars *shellVars) positionalLen(s string) int {
	n := 0
	for vars.positional && n < len(s) && s[n] >= '0' && s[n] <= '9' && !mutated("workspace-config-shell-positional") {
		n++
	}
	return n
}

// assign records the assignment word w (NAME=VALUE; bash's NAME+=VALUE appends to the value,
// an unknown one staying unknown: atk49a F8); false when w is none.
func (vars *shellVars) assign(w string) bool {
	name, value, ok := assignment(w)
	if !ok {
		return false
	}
	if w[len(name)] == '+' && !mutated("workspace-shell-append") {
		old, known := vars.m[name]
		if !known {
			old = "${" + name + "}"
		}
		value = old + value
	}
	vars.set(name, value)
	return true
}

func isNameByte(c byte, i int) bool {
	return c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || i > 0 && c >= '0' && c <= '9'
}

// assignment splits a shell word NAME=VALUE (or NAME+=VALUE).
func assignment(w string) (name, value string, ok bool) {
	i := strings.IndexByte(w, '=')
	if i <= 0 {
		return "", "", false
	}
	name = strings.TrimSuffix(w[:i], "+")
	for j := 0; j < len(name); j++ {
		if !isNameByte(name[j], j) {
			return "", "", false
		}
	}
	return name, w[i+1:], name != ""
}

// defaultValue is the default d of the expansion x (`${V:-d}`, `${V-d}`) of the variable name
// when the program does not set it (nor assigns it by what the reader does not model): what
// bash makes of it where the environment does not set V either. A default holding braces is
// not read (nested expansions stay unresolved).
func defaultValue(x, name string, vars *shellVars) (string, bool) {
	if _, set := vars.m[name]; set || vars.opaque || name == "" || !strings.HasPrefix(x, "${") || mutated("workspace-shell-idioms") {
		return "", false
	}
	rest := strings.TrimSuffix(x[2+len(name):], "}")
	var d string
	ok := false
	for _, op := range []string{":-", "-", ":=", "="} {
		if d, ok = strings.CutPrefix(rest, op); ok {
			break
		}
	}
	return d, ok && !strings.ContainsAny(d, "{}")
}

// nameBuiltins are the builtins that assign the names their words spell: a declaration's
// (`export K=V`, `declare -x K`), read's, mapfile's and printf -v's.
var nameBuiltins = map[string]bool{"export": true, "declare": true, "typeset": true, "local": true, "readonly": true,
	"read": true, "mapfile": true, "readarray": true, "printf": true}

// loadsNames: the statement (variables expanded) may set names the reader cannot name: it
// sources a file or evals a string, or a builtin of nameBuiltins spells a name from what the
// reader did not resolve (`export $(grep -v '^#' .env | xargs)`, `export "$k=$v"` after a
// `read -r k v`, `declare -x $(cat .env)`, `readonly "$(cat .env)"`: atk44a F1).
func loadsNames(words []string) bool {
	k := command(words)
	for k < len(words) && !mutated("workspace-shell-default-declare") {
		if _, _, ok := assignment(words[k]); !ok {
			break
		}
		k++ // IFS== read -r k v: the prefix is the builtin's environment, not its command
	}
	if k >= len(words) {
		return false
	}
	switch c := words[k]; {
	case c == "source" || c == "." || c == "eval":
		return true
	case !nameBuiltins[c] || mutated("workspace-shell-default-declare"):
		return false
	}
	args := words[k+1:]
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case words[k] == "printf":
			if a != "-v" || i+1 == len(args) {
				continue // printf's format and arguments print; only -v NAME assigns
			}
			i++
			a = args[i]
		case strings.HasPrefix(a, "-"):
			if words[k] != "declare" && words[k] != "typeset" && words[k] != "local" && words[k] != "export" &&
				words[k] != "readonly" && len(a) == 2 && strings.ContainsAny(a[1:], "pdtnNuiCcsO") {
				i++ // read -p PROMPT, mapfile -d DELIM …: the option's value, not a name
			}
			continue
		}
		if n, _, _ := strings.Cut(a, "="); unresolved(n) >= 0 || strings.ContainsAny(n, "`") {
			return true
		}
	}
	return false
}
