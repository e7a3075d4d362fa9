package wslayer

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A config's command line is run by a shell (a hook's `command` by `sh -c`, lefthook's `run`,
// a server's `sh -c '…'` argument, a .husky script): it was split at blanks and each word read
// by configWord, so an operator glued to a word (`python3 x.py;true`, `x.py>/dev/null`), a quoted
// or escaped blank (`python3 "my tools/x.py"`), a spelling of the project the shell resolves
// (`"${CLAUDE_PROJECT_DIR%/}"/x.sh`, `"$(pwd)"/x.sh`), a glob (`scrip?s/x.py`) and a directory
// change before the program (`cd server && python3 main.py`) named no file: the hook's own
// script was the call's to rewrite (atk46a F1, F2). Each such string is now read by the shell
// reader the started scripts get (rcshell_linux.go): statements split at operators, quotes and
// $'…' removed, the project's variables and $(pwd) the workspace's root, ${V%…} and ${V:?}
// their values, globs matched as sh matches them, a cd followed; each statement's words are
// judged as a command line's from each directory the line may be in.

// shellMeta are the bytes that make a config's string more than one plain word to a shell.
const shellMeta = " \t\n;&|<>()$`\"'*?[{~\\"

// maxConfigLines bounds the bytes of config strings read as shell command lines in one walk,
// and maxConfigStmts their statements, each counted once per directory it is judged from, in a
// string as between strings (atk47a F7); past either what the rest starts is not judged
// (runCut), as a YAML or TOML config past maxParsedConfig. Real configs hold a few KiB; a
// statement costs a command line's reading from each directory (65,000 of them, 1 MiB, held
// a commit 17 s).
var (
	maxConfigLines = 1 << 20 // a variable for the tests
	maxConfigStmts = 16384   // a variable for the tests
)

// configLineSeen are the config strings read as command lines, each once (a config repeats a
// string as often as it likes), and what they cost, of the bounds.
type configLineSeen struct {
	seen         map[string]bool
	bytes, stmts int
	// globs are the first matches of their globs, by directory and pattern; globWork the
	// directory entries they read, of maxGlobEntries (configglob_linux.go)
	globs    map[globKey]globFound
	globWork int
}

// maxConfigGlob bounded the files one glob of a config's command line was matched to (the
// mutants' old walk, globAll): the glob now takes its first match (configglob_linux.go).
const maxConfigGlob = 256

// configLines reads each of strs (a config's strings as its parser gives them) that a shell
// would split as a command line run from the workspace's root and the config's directory.
func (f *follower) configLines(by string, strs []string) {
	if mutated("workspace-config-shell-lines") {
		return
	}
	for _, s := range strs {
		if !strings.ContainsAny(s, shellMeta) || f.lines.seen[s] {
			continue // one plain word (the words reader's already), or read already
		}
		if f.lines.seen == nil {
			f.lines.seen = map[string]bool{}
		}
		f.lines.seen[s] = true
		if f.lines.bytes += len(s); (f.lines.bytes > maxConfigLines || f.lines.stmts > maxConfigStmts) && !mutated("workspace-config-shell-bound") {
			f.linesCut()
			return
		}
		f.configLine(by, s)
	}
}

// linesCut fails closed for config command lines past their bounds: what the rest starts is
// not judged.
func (f *follower) linesCut() {
	if f.g.runCut == "" {
		f.g.runCut = fmt.Sprintf("command lines in configs of more than %d KiB or %d statements in all", maxConfigLines>>10, maxConfigStmts)
	}
}

// configLine judges the command line s of the config by as sh runs it from the workspace's
// root and the config's directory.
func (f *follower) configLine(by, s string) {
	f.shellLine(by, s, uniq(f.g.ws, filepath.Dir(by)), 0, nil)
}

// maxLineNest bounds the `sh -c` codes within a config's command line that are read.
const maxLineNest = 4

// shellLine judges the shell code s run from each of dirs (depth: the sh -c it is in) with the
// variables vars (nil: a config's line's, the client's; a nested code's are what its parent
// exports, childVars; a sourced file's its sourcer's own): its heredocs' bodies taken out first
// (atk47a F1), what sh runs of the rest (shRunnable) read. It returns the directories the code
// may end in (a sourced file's cd moves its sourcer).
func (f *follower) shellLine(by, s string, dirs []string, depth int, vars *shellVars) []string {
	if vars == nil {
		vars = f.lineVars(dirs[0])
		if depth == 0 && filepath.Base(filepath.Dir(by)) == ".husky" && !mutated("workspace-config-husky-self") {
			// husky runs `sh -e .husky/<hook>` from the root (git ran it by that path before v9):
			// $0 is the script, `dirname "$0"` .husky (atk47a F6); a -c string's $0 is the shell's name
			vars.m[selfDir] = filepath.Dir(by)
		}
	}
	if !mutated("workspace-config-git-top") {
		// `$(git rev-parse --show-toplevel)`, as `$(pwd)` is: the repository the config is in
		// (atk48a F7: `cd "$(git rev-parse --show-toplevel)/server"` was not followed)
		vars.m[gitTop] = f.repoTop(filepath.Dir(by))
	}
	s, docs := lineHeredocs(s)
	stmts := shellStatements(shRunnable(s))
	vars.unmodeled(stmts)
	if mutated("workspace-config-shell-stmts-each") {
		f.lines.stmts += len(stmts)
	}
	return f.lineStmts(by, stmts, dirs, depth, vars, docs)
}

// lineStmts judges the statements stmts of a shell code (shellLine's) from each of dirs: a `for`
// loop's body once for each word it binds its name to (lineLoop); it returns the directories the
// code may end in.
func (f *follower) lineStmts(by string, stmts [][]string, dirs []string, depth int, vars *shellVars, docs map[string]string) []string {
	for i := 0; i < len(stmts); i++ {
		words := stmts[i]
		// each statement is judged from each directory: charged so, within the string (one
		// string of 100,000 after 16 cds held a commit 19.6 s, atk47a F7)
		if f.lines.stmts += len(dirs); f.lines.stmts > maxConfigStmts && !mutated("workspace-config-shell-stmts-each") {
			f.linesCut()
			return dirs
		}
		name, list, end, loop := forHead(stmts, i)
		loop = loop && !mutated("workspace-config-shell-for")
		dirs = f.lineStmt(by, words, dirs, depth, vars, docs)
		if loop {
			dirs = f.lineLoop(by, stmts[i+1:end], name, list, dirs, depth, vars, docs)
			i = end
		}
	}
	return dirs
}

// lineStmt judges one statement (words, unexpanded) of a shell code from each of dirs; it
// returns the directories the code may be in after it.
func (f *follower) lineStmt(by string, words, dirs []string, depth int, vars *shellVars, docs map[string]string) []string {
	raw := slices.Clone(words) // as a single-quoted code is handed on (rawCodes)
	for j := range words {
		words[j] = vars.expand(words[j])
	}
	words, redirs := lineRedirects(splitRedirects(words)) // sh's operands: `cd >/dev/null server`
	// what it assigns a loader variable: PYTHONPATH=server python3 -m main (atk48a F4)
	f.lineLoaders(by, dirs, words)
	pre := command(words)
	k := pre
	for k < len(words) && vars.assign(words[k]) { // `X=1 cmd` or `X=1; cmd`: the wider reading, set for both
		k++
	}
	if k == len(words) {
		vars.assigned(words[pre:]) // under set -a, exported
		return dirs
	}
	if words[k] == "cd" || words[k] == "pushd" {
		switch {
		case mutated("workspace-config-shell-cd"):
		case vars.started && !mutated("workspace-config-shell-started-cd"):
			// a started script's code: as the script's own cd, one it cannot place fails
			// closed (atk49a F3: `sh -c 'cd "$1" && python3 main.py' _ server`)
			dirs = f.shellCd(by, dirs, words[k:], vars)
		default:
			dirs = f.configCd(by, dirs, words[k:], vars)
		}
		return dirs
	}
	declare(words[k:], vars) // export SRV=server
	vars.exports(words[k:])  // and what it hands on (atk48a F4)
	read := false
	if words[k] == "." || words[k] == "source" {
		dirs, read = f.lineSource(by, dirs, words[k:], vars, depth)
	}
	if !read && loadsNames(words) && !mutated("workspace-config-shell-opaque") {
		// a file not read, an eval or a computed export (`export $(cat .env)`) may set any
		// name: a default after it (${SRV:-app}) is not known to be what runs, as in a started
		// script (atk43 F6, atk44a F1; atk49a F7)
		vars.opaque = true
	}
	line := append(words[k:len(words):len(words)], redirs...)
	if w := unplacedRun(line, vars); w != "" {
		f.lineUnplaced(by, w)
		return dirs
	}
	f.nestedCodes(by, dirs, line, raw, words[pre:k], docs, vars, depth, false)
	f.cdInline(by, dirs, line)
	for _, d := range dirs {
		f.words(by, d, f.shellGlobs(by, d, line, vars), 0)
	}
	return dirs
}

// nestedCodes reads what the statement whose command line is line (its command's words and
// redirections, expanded; raw: the statement unexpanded; pre: its prefix assignments) runs in a
// child shell from each of dirs, as shellLine reads a line: a shell's or a wrapper's -c code
// (lineCodes, also unexpanded: rawCodes), a heredoc's body, and what find's actions run
// (findExec), each child from what vars (the statement's shell, at depth) exports. A config
// line's and a started script's statements alike (fix48-f: a script's were not read). For a
// started script (script) the codes' bytes count against maxConfigLines (a config line's were
// counted in its string), and a message it shows (echo, printf, cat's heredoc) is prose
// (message).
func (f *follower) nestedCodes(by string, dirs, line, raw, pre []string, docs map[string]string, vars *shellVars, depth int, script bool) {
	if script && message(line) {
		f.findExec(by, dirs, line)
		return
	}
	env := stmtEnv(pre, line)
	nested := func(code string, params []string) bool {
		if script && !mutated("workspace-follow-shell-nested-charge") {
			if f.lines.bytes += len(code); f.lines.bytes > maxConfigLines {
				f.linesCut()
				return false
			}
		}
		c := f.childVars(vars, dirs[0], env)
		c.started = c.started || script
		c.params(params)
		f.shellLine(by, code, slices.Clone(dirs), depth+1, c)
		return true
	}
	if depth >= maxLineNest {
		f.findExec(by, dirs, line)
		return
	}
	params := shellParams(line) // sh -c CODE _ server: $0 and $1 (atk49a F3)
	for _, code := range rawCodes(lineCodes(line), raw) {
		if !nested(code, params) { // sh -c 'cd server; python3 main.py', from what this shell exports
			return
		}
	}
	bodies := docs
	if len(docs) > 0 && !mutated("workspace-config-shell-heredoc-vars") {
		bodies = vars.heredocsIn(line, docs) // an unquoted delimiter's: this shell's $SRV expanded
	}
	for _, w := range line {
		// a heredoc's body, read as code on its own (`sh <<EOF`, `cat <<EOF | sh` run it;
		// for `cat` it is prose, which a quote or `(` in it no longer cuts the rest of)
		if body, ok := bodies[w]; ok && !nested(strings.TrimPrefix(body, heredocExpand), nil) {
			return
		}
	}
	f.findExec(by, dirs, line) // find … -exec python3 {} ; (atk48a F8)
}

// message: the statement line shows a message on the terminal (a script's `echo "starting the
// server"`, a usage text `cat >&2 <<EOF`), not written to a file a later statement may run
// (`cat > /tmp/x.sh <<EOF`) nor to a shell (`echo … | sh`, a runtime reading a pipe, fails
// closed: stmtInline): prose, whose words name no program (a directory a message named was
// protected whole).
func message(line []string) bool {
	if len(line) == 0 || !messageCmds[filepath.Base(line[0])] {
		return false
	}
	for i, w := range line {
		op, ok := redirection(w)
		if !ok || !strings.Contains(op, ">") {
			continue
		}
		file := w[len(op):]
		if op == w && i+1 < len(line) {
			file = line[i+1]
		}
		if strings.HasSuffix(op, "&") && strings.Trim(file, "0123456789-") == "" || strings.HasPrefix(file, "/dev/") {
			continue // >&2, 2>&1, >/dev/null
		}
		return false
	}
	return true
}

// messageCmds print their operands or input.
var messageCmds = map[string]bool{"cat": true, "echo": true, "printf": true}

// shellNames are the shells whose -c option runs its operand as code.
var shellNames = map[string]bool{"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true, "ash": true}

// shellCode is the code a shell among words runs by -c (`sh -c CODE`, `bash -ec CODE`, `bash -o
// pipefail -c CODE`): the first operand after its options when one of them holds c.
func shellCode(words []string) (string, bool) {
	code, _, ok := shellCodeAt(words)
	return code, ok
}

// shellCodeAt is shellCode with the index of the code among words.
func shellCodeAt(words []string) (string, int, bool) {
	for j, w := range words {
		if !shellNames[filepath.Base(w)] {
			continue
		}
		c := false
		for i, o := range words[j+1:] {
			switch {
			case o == "-o" || o == "+o" || o == "-O" || o == "+O":
			case strings.HasPrefix(o, "-") && !strings.HasPrefix(o, "--"):
				c = c || strings.Contains(o, "c")
			case strings.HasPrefix(o, "--"):
			default:
				if c {
					return o, j + 1 + i, true
				}
			}
		}
	}
	return "", 0, false
}

// shellParams are the words after a shell's -c code among words, which the code gets as $0,
// $1, … (`sh -c 'cd "$1" && python3 main.py' _ server`); nil when words run no such code.
func shellParams(words []string) []string {
	_, i, ok := shellCodeAt(words)
	if !ok || mutated("workspace-config-shell-positional") {
		return nil
	}
	return words[i+1:]
}

// params binds the positional parameters $0…$9 to the words given (none: left unresolved).
func (vars *shellVars) params(given []string) {
	if len(given) == 0 {
		return
	}
	vars.positional = true
	for i, w := range given[:min(len(given), 10)] {
		vars.m[strconv.Itoa(i)] = w
		if unresolved(w) < 0 {
			vars.m[paramDir+strconv.Itoa(i)] = path.Dir(w)
		}
	}
}

// lineHeredocs takes the heredocs' bodies out of the shell code s as sh reads them (heredocs):
// the text left, each body by its marker word. A body read as statements of the text (an
// apostrophe in `doesn't` opened a quote that swallowed the rest, a `(` in its prose cut it:
// atk47a F1). Heredocs the reader cannot delimit: s whole, the wider reading.
func lineHeredocs(s string) (string, map[string]string) {
	if mutated("workspace-config-shell-heredocs") {
		return s, nil
	}
	if text, docs, ok := heredocs(s); ok {
		return text, docs
	}
	return s, nil
}

// shRunnable is the part of the shell code s that sh runs: the lines before the first one that
// holds a `(` glued to a word (`Read(src/**)`, a permission pattern, not a command), a syntax
// error at which sh (dash and bash alike) stops before it runs that line. Not one in a comment
// (a `#` starting a word, to the line's end) or in a ${…} (`${X:-a(b)}`), which sh runs past
// (atk47a F1); a line with bash's `[[` (`[[ $x =~ a(b) ]]`, bash's regex) is no syntax error to
// bash: the text is read whole, as where unsure.
func shRunnable(s string) string {
	if mutated("workspace-config-shell-syntax") {
		return s
	}
	quote := byte(0)
	line, param := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote == '\'':
			if c == '\'' {
				quote = 0
			}
		case c == '\\':
			i++
		case quote == '"':
			if c == '"' {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '\n':
			line = i + 1
		case c == '#' && wordStart(s, i) && !mutated("workspace-config-shell-comments"):
			for i+1 < len(s) && s[i+1] != '\n' {
				i++ // a comment: sh reads no syntax in it
			}
		case mutated("workspace-config-shell-syntax-params"):
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			param++
			i++
		case c == '}' && param > 0:
			param--
		case c == '[' && strings.HasPrefix(s[i:], "[[") && wordStart(s, i):
			return s
		}
		if c == '(' && quote == 0 && param == 0 && i > 0 && !strings.ContainsRune(" \t;&|()=$<>@!+*?`{", rune(s[i-1])) &&
			!(i+1 < len(s) && s[i+1] == ')') {
			return s[:line] // name() is a function's definition; a=( ) bash's array
		}
	}
	return s
}

// wordStart: s[i] starts a word (sh's operators and blanks end one).
func wordStart(s string, i int) bool {
	return i == 0 || strings.IndexByte(" \t\n;&|()<>", s[i-1]) >= 0
}

// configCd adds the directory a config line's cd (pushd) words changes into to dirs, from each
// of them, when it is in the workspace. Its target is expanded as sh expands a program's word
// (shellWord): every directory a pattern matches (bash refuses several, `too many arguments`;
// dash takes the first: each is read as possible, atk48a F3), bash's brace words and the word
// itself (dash's, atk48a F6), its literal when it matches none; past maxShellDirs such
// directories it fails closed. One the reader cannot place (a variable it does not know, ~)
// is the Known gap of a program named below such a variable: dirs stay as they were.
func (f *follower) configCd(by string, dirs, words []string, vars *shellVars) []string {
	to := ""
	for _, w := range words[1:] {
		if w == "--" || strings.HasPrefix(w, "-") && w != "-" {
			continue // -P, -L, -e
		}
		to = w
		break
	}
	if to == "" || to == "-" || strings.HasPrefix(to, "~") && !strings.HasPrefix(to, "~+") {
		return dirs
	}
	if to = tildePlus(to, vars.m["PWD"]); unresolved(to) >= 0 {
		if unplacedWord(to, vars) {
			f.lineUnplaced(by, to) // cd "$(…)": a command's output (atk49a F6)
		}
		return dirs
	}
	vars.m["PWD"] = unresolvedSub // which of dirs it is: not known
	for _, d := range slices.Clone(dirs) {
		for _, t := range f.shellWord(by, d, to, globCd) {
			if unresolved(t) >= 0 {
				continue
			}
			p := f.g.wsSpelled(absFrom(d, t))
			if p != f.g.ws && !strings.HasPrefix(p, f.g.ws+"/") || slices.Contains(dirs, p) {
				continue
			}
			if len(dirs) < maxShellDirs {
				dirs = append(dirs, p)
			} else if (t != to || vars.looping > 0) && f.g.runCut == "" && !mutated("workspace-config-cd-glob") {
				// an expansion's directories past the bound: where the line goes next is not known
				f.g.runCut = fmt.Sprintf("a config's command line whose cd target %q names more than %d directories: name the directory literally", to, maxShellDirs)
			}
		}
	}
	return dirs
}

// tildePlus is the word w with bash's ~+ (the working directory, $PWD) replaced by pwd.
func tildePlus(w, pwd string) string {
	if rest, ok := strings.CutPrefix(w, "~+"); ok && (rest == "" || rest[0] == '/') {
		return pwd + rest
	}
	return w
}

// splitRedirects splits each word that holds a redirection glued to it (`x.py>/dev/null`,
// `x.py<in`, `x.py 2>&1` is the reader's already) into the word and the redirection, as sh
// does: the operator ends a word.
func splitRedirects(words []string) []string {
	if mutated("workspace-config-shell-redirects") {
		return words
	}
	var out []string
	for _, w := range words {
		for {
			i := strings.IndexAny(w, "<>")
			if i <= 0 || strings.Trim(w[:i], "0123456789") == "" {
				break // a redirection's own word (`>f`, `2>f`): the file is its operand
			}
			out = append(out, w[:i])
			w = w[i:]
		}
		out = append(out, w)
	}
	return out
}

// shellGlobs are words as sh (bash) expands them from dir: `~+` the working directory and, in a
// program's position (the command, the script a runtime runs), shellWord's words.
// A pattern elsewhere is a tool's argument (`prettier --write src/**/*.ts`), as before: what it
// matches would protect every source the hook formats.
func (f *follower) shellGlobs(by, dir string, words []string, vars *shellVars) []string {
	if mutated("workspace-config-shell-globs") {
		return words
	}
	scripts := runScripts(words)
	var out []string
	for i, w := range words {
		w = tildePlus(w, vars.m["PWD"])
		if i > 0 && scripts[i] == "" {
			out = append(out, w)
			continue
		}
		use := globScript
		if i == 0 {
			use = globCmd
		}
		if vars.loopPat(w) {
			out = append(out, f.loopGlob(by, dir, w)...) // for f in hooks.d/*; do sh "$f"; done: each file
			continue
		}
		out = append(out, f.shellWord(by, dir, w, use)...)
	}
	return out
}

// globUse is what a word sh expands is for: how its pattern's matches are taken.
type globUse int

const (
	globScript globUse = iota // a runtime's script: the first match
	globCmd                   // the command: the first match, where sh would run it
	globCd                    // cd's target: every directory matched
)

// shellWord are the words sh (bash) makes of w from dir where it is a program (use: the command
// or a runtime's script) or cd's target: a brace list each of its words (bash's) and w itself
// (dash's), each pattern (`*`, `?`, `[…]`) the files it matches or, when it matches none,
// itself (glob). One expansion for both places, so that what sh does to a program's word it is
// read to do to a cd's too (atk48a F3, F6).
func (f *follower) shellWord(by, dir, w string, use globUse) []string {
	var out []string
	for _, a := range lineBraces(w) {
		if a == "" && use == globCd {
			continue // bash drops a null word: `cd {server,}` is `cd server`
		}
		if use == globCd && mutated("workspace-config-cd-braces") && a != w {
			continue
		}
		// sh runs the first match, the others are its arguments, which a pattern was
		// before (skipped): every match a program made every file a string such as Kiro's
		// "patterns": ["**/*.py"] matches read-only
		out = append(out, f.glob(by, dir, a, use)...)
	}
	return out
}

// lineBraces are the words bash makes of w by brace expansion (the first maxLineBraceWords:
// in a program's position bash runs the first, the others are its arguments) and w itself, as
// sh (dash), which does not expand braces, runs it.
func lineBraces(w string) []string {
	if mutated("workspace-config-shell-braces") {
		return []string{w}
	}
	words, _ := braceExpand(w, maxLineBraceWords)
	if len(words) == 1 && words[0] == w {
		return words
	}
	return append(words, w)
}

// glob is what sh makes of the word w (a pattern) from dir: its first match, else w; for cd's
// target (use globCd) every directory it matches. In the command's position (globCmd) sh runs
// the match only where it would run the file: a word without a `/` is looked up in PATH (a
// file pattern's `*.ts` matched the root's vite.config.ts, taken for a program at the root:
// every change refused, atk47a F2), and a file no one may execute is refused (126), protected
// alone, so that a call cannot chmod it into the program.
func (f *follower) glob(by, dir, w string, use globUse) []string {
	cmd := use == globCmd
	if !strings.ContainsAny(w, "*?[") || unresolved(w) >= 0 {
		return []string{w}
	}
	if use == globCd && mutated("workspace-config-cd-glob") {
		return []string{w}
	}
	if cmd && !strings.Contains(w, "/") && !mutated("workspace-config-glob-path") {
		return []string{w} // sh: `a.ts: not found`, whatever the directory holds
	}
	if mutated("workspace-config-glob-walk") || mutated("workspace-config-shell-glob-all") {
		return f.globAll(by, dir, w, strings.ReplaceAll(w, "[!", "[^"))
	}
	n := 1
	if use == globCd {
		n = maxShellDirs + 1 // past the bound the cd fails closed (configCd)
	}
	r := f.globMatches(dir, w, n)
	if r.cut {
		f.globCut(by, dir, w)
	}
	if len(r.matches) == 0 {
		return []string{w}
	}
	if use == globCd {
		var out []string
		for _, m := range r.matches {
			if st, err := os.Stat(m); err == nil && st.IsDir() {
				out = append(out, m) // a file matched: cd fails there, the line stays
			}
		}
		return out
	}
	match := r.first()
	st, err := os.Stat(match)
	switch {
	case !cmd || err != nil || mutated("workspace-config-glob-exec"):
	case st.IsDir():
		return []string{w} // sh: `Is a directory`
	case st.Mode().Perm()&0o111 == 0:
		f.add(f.g.wsSpelled(match), by) // sh: `Permission denied`
		return []string{w}
	}
	return []string{match}
}

// globCut protects what the pattern w (from dir) may name when its walk was cut by the budget:
// the directory it starts below, or, at the workspace's root, no more than a file the call
// makes to sort first would escape (README's Known gaps): never the whole workspace, which
// the call's own files would reach (atk47a F3).
func (f *follower) globCut(by, dir, w string) {
	fixed, _, _ := strings.Cut(w, "*")
	fixed, _, _ = strings.Cut(fixed, "?")
	fixed, _, _ = strings.Cut(fixed, "[")
	if d := f.g.wsSpelled(absFrom(dir, filepath.Dir(fixed+"x"))); d != f.g.ws && strings.HasPrefix(d, f.g.ws+"/") {
		f.add(d, by)
	}
}

// globAll is the walk before atk47a F3 and F7 (the mutants'): every match by filepath.Glob,
// past maxConfigGlob at the root every change refused; the first only but with mutant
// workspace-config-shell-glob-all.
func (f *follower) globAll(by, dir, w, pat string) []string {
	base := ""
	if !filepath.IsAbs(pat) {
		base = globEscape(dir) + "/"
	}
	m, err := filepath.Glob(base + pat)
	if err != nil || len(m) == 0 {
		return []string{w}
	}
	if len(m) > maxConfigGlob {
		fixed, _, _ := strings.Cut(w, "*")
		fixed, _, _ = strings.Cut(fixed, "?")
		fixed, _, _ = strings.Cut(fixed, "[")
		d := f.g.wsSpelled(absFrom(dir, filepath.Dir(fixed+"x")))
		if d == f.g.ws && f.g.runCut == "" {
			f.g.runCut = fmt.Sprintf("a config's command line whose pattern %q matches more than %d files at the workspace's root", w, maxConfigGlob)
		} else if d != f.g.ws {
			f.add(d, by)
		}
		m = m[:maxConfigGlob]
	}
	if !mutated("workspace-config-shell-glob-all") {
		m = m[:1]
	}
	return m
}

// globEscape escapes the pattern bytes of the path p (the workspace's own name may hold them).
func globEscape(p string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`).Replace(p)
}

// maxLineBraceWords bounds the words one brace expansion makes.
const maxLineBraceWords = 64

// paramOp is the value of the expansion ${inner} when inner applies an operator the value
// decides to a variable the reader knows: `:?`/`?` and `:=`/`=` (set: its value) and `%`, `%%`,
// `#`, `##` with a literal pattern (the value without that suffix or prefix), as sh computes
// them. A pattern with `*?[` or a `$` is not modelled (the expansion stays unresolved).
func (vars *shellVars) paramOp(inner string) (string, bool) {
	if mutated("workspace-config-shell-params") {
		return "", false
	}
	n := 0
	for n < len(inner) && isNameByte(inner[n], n) {
		n++
	}
	v, known := vars.m[inner[:n]]
	if n == 0 || n == len(inner) || !known || unresolved(v) >= 0 {
		return "", false
	}
	op := inner[n:]
	for _, set := range []string{":?", "?", ":=", "="} {
		if strings.HasPrefix(op, set) {
			return v, v != "" || !strings.HasPrefix(set, ":")
		}
	}
	for _, trim := range []string{"%%", "%", "##", "#"} {
		pat, ok := strings.CutPrefix(op, trim)
		if !ok {
			continue
		}
		if strings.ContainsAny(pat, "*?[$`") {
			return "", false
		}
		if trim[0] == '%' {
			return strings.TrimSuffix(v, pat), true
		}
		return strings.TrimPrefix(v, pat), true
	}
	return "", false
}

// configShellText are the strings of the config file (text, its strings decoded: vals) that a
// shell may run: each string, and a .husky hook's whole text (a script sh runs). An .envrc and a
// mise config are bash's, read by their own reader (rcloads_linux.go).
func configShellText(file, text string, vals []string) []string {
	dir, name := filepath.Base(filepath.Dir(file)), filepath.Base(file)
	switch {
	case name == ".envrc" || miseConfig(dir, name):
		return nil
	case dir == ".husky":
		return append([]string{text}, vals...)
	}
	return shellValues(file, text, vals) // a file pattern its schema names is not run
}

// envBases are bases and the directories env's chdir option among words names (from dir), in
// the workspace: where env runs its command from.
func (f *follower) envBases(dir string, words, bases []string) []string {
	for _, d := range envChdirs(words) {
		if d := f.g.wsSpelled(absFrom(dir, d)); strings.HasPrefix(d, f.g.ws+"/") && !slices.Contains(bases, d) {
			bases = append(bases, d)
		}
	}
	return bases
}

// envChdirs are the directories GNU env's chdir option names among words (a command line's, or
// a config's strings in no order, with env among them), read by env's getopt: `-C DIR`, `-CDIR`,
// a cluster of its flags ending in C (`-iC DIR`, `-0vCDIR`), `--chdir DIR`, `--chdir=DIR` and
// any prefix of the long name (`--ch=DIR`).
func envChdirs(words []string) []string {
	if mutated("workspace-env-chdir") || !slices.ContainsFunc(words, func(w string) bool { return filepath.Base(w) == "env" }) {
		return nil
	}
	var out []string
	next := func(j int) {
		if j+1 < len(words) {
			out = append(out, words[j+1])
		}
	}
	for j, w := range words {
		if long, ok := strings.CutPrefix(w, "--"); ok {
			name, v, eq := strings.Cut(long, "=")
			switch {
			case name == "" || !strings.HasPrefix("chdir", name):
			case eq:
				out = append(out, v)
			default:
				next(j)
			}
			continue
		}
		i := 1
		for i < len(w) && w[0] == '-' && strings.IndexByte("0iv", w[i]) >= 0 {
			i++ // env's flags that take no value, before C in one cluster
		}
		switch {
		case len(w) < 2 || w[0] != '-' || i == len(w) || w[i] != 'C':
		case i+1 < len(w):
			out = append(out, w[i+1:])
		default:
			next(j)
		}
	}
	return out
}
