package wslayer

import (
	"maps"
	"path/filepath"
	"strings"
)

// A runtime's standard input is its program when it runs no script (attack round atk45a F4):
// the text of a here-string or heredoc was read as written, so one holding an expansion the
// reader cannot resolve (`<<< "$(cat boot.txt)"`, `<<EOF⏎$CODE⏎EOF`) was an empty program, and
// a pipe into a command named by a variable (`cat boot.txt | "$PY" -`) was no runtime at all.
// An unquoted delimiter's heredoc is expanded as bash does, with the walk's variables; what
// stays unresolved fails closed as a pipe does; and a command the reader cannot name, fed its
// standard input, is read as each runtime would read it.

// pipeMark is the word the shell reader ends a statement fed by a pipe with (`a | b`: b's).
const pipeMark = "\x01pipe"

// pipeUnseen says why a runtime reading a pipe (or a standard input the statement does not feed)
// is a program the check cannot see.
const pipeUnseen = "a runtime reading its program from standard input (a pipe) the check cannot see"

// pipeAt reads the | at text[*i]: a pipe (the next statement is fed by it), or || (a list).
func pipeAt(text string, i *int) bool {
	if *i+1 < len(text) && text[*i+1] == '|' {
		*i++
		return false
	}
	return !mutated("workspace-inline-stdin-pipe")
}

// end adds the statement stmt, when it has words, ended by pipeMark when a pipe feeds it: its
// standard input (stdinOf).
func (r *shellReader) end(stmt []string) {
	if len(stmt) == 0 {
		return
	}
	if r.piped {
		stmt = append(stmt, pipeMark)
	}
	r.stmts, r.piped = append(r.stmts, stmt), false
}

// heredocExpand starts the body of a heredoc whose delimiter is unquoted and whose text holds an
// expansion: bash expands it, the walk's variables known (heredocsIn); stdinOf fails closed for
// one left so.
const heredocExpand = "\x02"

// anyRuntime are the languages a command the reader cannot name may run its program in.
var anyRuntime = []string{"py", "js", "sh"}

// unresolvedCommand: w (a statement's command, the walk's variables expanded) names a program
// the reader cannot tell (`"$PY"`, `$(command -v python3)`, `"$VENV/bin/$PY"`): it may be any
// runtime.
func unresolvedCommand(w string) bool {
	return strings.ContainsAny(filepath.Base(w), "$`") && !mutated("workspace-inline-stdin-command")
}

// expansion: s holds what bash expands (a parameter, a command substitution, arithmetic), which
// the reader left unresolved.
func expansion(s string) bool {
	if strings.Contains(s, "`") {
		return true
	}
	for i := strings.IndexByte(s, '$'); i >= 0 && i+1 < len(s); {
		if c := s[i+1]; c == '{' || c == '(' || c == '[' || isNameByte(c, 1) || strings.IndexByte("@*#?!$-", c) >= 0 {
			return true
		}
		j := strings.IndexByte(s[i+1:], '$')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// heredocsIn is docs with the heredocs the statement words feed expanded as bash expands an
// unquoted delimiter's body, vars known: one the walk resolves is its text; one it does not
// stays marked (heredocExpand), failing closed.
func (vars *shellVars) heredocsIn(words []string, docs map[string]string) map[string]string {
	if mutated("workspace-inline-heredoc-expand") {
		return docs
	}
	out, cloned := docs, false
	for _, w := range words {
		body, ok := strings.CutPrefix(docs[w], heredocExpand)
		if !ok {
			continue
		}
		if text, ok := vars.heredoc(body); ok {
			if !cloned {
				out, cloned = maps.Clone(docs), true
			}
			out[w] = text
		}
	}
	return out
}

// heredoc expands an unquoted delimiter's heredoc body as bash does: a backslash escapes a $, a backquote or
// a backslash; a backslash-newline joins lines; each $NAME and ${…} is the walk's value; ok false when any
// expansion stays unresolved (a command substitution, arithmetic, a name the walk does not
// know, a positional or special parameter).
func (vars *shellVars) heredoc(body string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c == '\\' && i+1 < len(body) && strings.IndexByte("$`\\\n", body[i+1]) >= 0:
			if i++; body[i] != '\n' {
				b.WriteByte(body[i])
			}
		case c == '`':
			return "", false
		case c == '$' && i+1 < len(body) && (body[i+1] == '{' || isNameByte(body[i+1], 0)):
			end := i + 2
			if body[i+1] == '{' {
				j := strings.IndexByte(body[i:], '}')
				if j < 0 {
					return "", false
				}
				end = i + j + 1
			} else {
				for end < len(body) && isNameByte(body[end], 1) {
					end++
				}
			}
			v := vars.expand(body[i:end])
			if expansion(v) {
				return "", false
			}
			b.WriteString(v)
			i = end - 1
		case c == '$' && i+1 < len(body) && strings.IndexByte("([@*#?!$-0123456789", body[i+1]) >= 0:
			return "", false
		default:
			b.WriteByte(c)
		}
	}
	return b.String(), true
}
