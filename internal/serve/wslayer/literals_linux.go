package wslayer

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// A program's string literals are read as the language reads them (attack round atk41 F15):
// literalPaths dropped every literal holding a backslash, longer than 512 bytes, or a JS
// template holding `${…}`, so `subprocess.run('bash ../scripts/setup.sh\n', shell=True)`, a
// tab escape and a long `sh -c` line left the script they run writable. Now a literal's escapes
// are decoded (\n, \t … separate words; \x2F, \u002F, \/ are the characters they stand for),
// a literal is read whole on its line (the literal and byte budgets bound the work, failing
// closed), Python's adjacent literals are one, and a template's `${…}` is a word's unresolved
// part: the literal after it is taken as a path from the program's directory and the root, and
// a start the check cannot place that leads up (`${d}/../x`, `../${f}`) fails closed.

// litMark stands for a template's `${…}` in a literal's text: what the program computes.
const litMark = "\x00"

// maxLiteralScan bounds the bytes literalPaths scans for closing quotes it does not find (a
// line of a thousand stray quotes is scanned to its end once for each): past it, fail closed.
var maxLiteralScan = 64 << 20 // a variable for the tests

// nextLiteral finds the next string literal in text from at: its decoded text (a template's
// `${…}` as litMark) and where the scan goes on. ok is false when the quote at q opens no
// literal on its line (the scan goes on after the quote).
func (f *follower) nextLiteral(text string, at int) (lit string, next int, found bool) {
	for {
		q := strings.IndexAny(text[at:], "'\"`")
		if q < 0 {
			return "", len(text), false
		}
		q += at
		body, end, ok := scanLiteral(text, q)
		if !ok {
			f.litScan += end - q
			at = q + 1
			if f.litScan > maxLiteralScan {
				return "", len(text), false
			}
			continue
		}
		if end-q > 514 && mutated("workspace-follow-literal-long") {
			at = q + 1 // the old bound: 512 bytes and its quotes
			continue
		}
		if mutated("workspace-follow-literal-escapes") {
			if strings.IndexByte(body, '\\') >= 0 || text[q] == '`' && strings.Contains(body, "${") {
				at = end
				continue
			}
		} else {
			body = decodeLiteral(body, text[q] == '`')
		}
		// Python's adjacent literals are one ('bash ../scr' 'ipts/x.sh'); in JS it is an error
		for text[q] != '`' {
			j := end
			for j < len(text) && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			if j == len(text) || text[j] != text[q] && (text[j] != '\'' && text[j] != '"') {
				break
			}
			more, e, ok := scanLiteral(text, j)
			if !ok {
				break
			}
			body += decodeLiteral(more, false)
			end = e
		}
		return body, end, true
	}
}

// scanLiteral reads the literal whose quote is at text[q], to its closing quote on the line
// (escapes skipped; a template's `${…}` skipped to its brace): its raw body and the index after
// the closing quote; not ok (end: where the scan stopped) when the line ends first.
func scanLiteral(text string, q int) (body string, end int, ok bool) {
	open := text[q]
	for i := q + 1; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			return "", i, false
		case c == '\\':
			i++
		case c == open:
			return text[q+1 : i], i + 1, true
		case open == '`' && c == '$' && i+1 < len(text) && text[i+1] == '{':
			if i = exprEnd(text, i+1); i < 0 {
				return "", len(text), false
			}
			if text[i] == '\n' {
				return "", i, false
			}
		}
	}
	return "", len(text), false
}

// exprEnd is the index of the '}' closing the template expression whose '{' is at text[open]
// (its strings skipped), of the line's end when the line ends first, -1 when the text does.
func exprEnd(text string, open int) int {
	depth, quote := 0, byte(0)
	for i := open; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\n':
			return i
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"' || c == '`':
			quote = c
		case c == '{':
			depth++
		case c == '}':
			if depth--; depth == 0 {
				return i
			}
		}
	}
	return -1
}

// decodeLiteral decodes a literal's escapes as Python and JS do: a control character's escape
// (\n, \t, \0 …) is white space (it separates words of a command line), \xHH, \uHHHH,
// \u{H…}, \UHHHHHHHH and octal the character they name, any other \c the c; a template's
// `${…}` becomes litMark.
func decodeLiteral(body string, template bool) string {
	if strings.IndexByte(body, '\\') < 0 && (!template || !strings.Contains(body, "${")) {
		return body
	}
	var b strings.Builder
	for i := 0; i < len(body); i++ {
		c := body[i]
		if template && c == '$' && i+1 < len(body) && body[i+1] == '{' {
			if i = exprEnd(body, i+1); i < 0 || body[i] != '}' {
				i = len(body) // scanLiteral found its end: not reached
			}
			b.WriteString(litMark)
			continue
		}
		if c != '\\' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := body[i]; e {
		case 'n', 't', 'r', 'v', 'f', 'b', 'a':
			b.WriteByte(' ')
		case 'x', 'u', 'U':
			r, n, ok := hexEscape(body, i, e, true)
			if !ok {
				b.WriteByte(e) // not an escape the language decodes: the letter, a separator in effect
				continue
			}
			b.WriteRune(r)
			i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(body) && j < i+3 && body[j] >= '0' && body[j] <= '7' {
				j++
			}
			v, _ := strconv.ParseUint(body[i:j], 8, 32)
			if v < ' ' || v > 0xff {
				b.WriteByte(' ')
			} else {
				b.WriteRune(rune(v))
			}
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}

// literalWord turns a word of a literal holding litMark into what it names: the literal after
// the last `${…}` as a path from the program's directory (and the root: words), "" when none;
// a start the check cannot place that leads up fails closed (runCut).
func (f *follower) literalWord(t todoFile, dir, w string) string {
	if mutated("workspace-follow-literal-escapes") {
		return ""
	}
	i := strings.Index(w, litMark)
	head, rest := w[:i], strings.TrimLeft(w[i+len(litMark):], "/")
	up := false
	// the directory a literal part names: added whole, unless it is the root or above
	dirOf := func(base, d string) {
		if p := absFrom(base, d); f.covers(p) {
			up = true
		} else {
			f.add(p, t.by)
		}
	}
	if j := strings.LastIndexByte(head, '/'); j >= 0 {
		dirOf(dir, head[:j+1]) // ../${name}.sh: a name the program computes there
	} else if rest == ".." || strings.HasPrefix(rest, "../") {
		up = true
	}
	if k := strings.Index(rest, litMark); k >= 0 && !up {
		// ${root}/tools/${x}/run.sh: tools/, from the program's directory and the root
		if j := strings.LastIndexByte(rest[:k], '/'); j >= 0 {
			dirOf(dir, rest[:j+1])
			dirOf(f.g.ws, rest[:j+1])
		}
		rest = ""
	}
	if up {
		if f.g.runCut == "" && !mutated("workspace-runs-cut-open") {
			rel, _ := filepath.Rel(f.g.ws, t.path)
			f.g.runCut = fmt.Sprintf("a program (%s) whose string %s names a path from what the check cannot resolve and up to "+
				"the workspace's root (it may name any file); name the path from the program's directory literally",
				strconv.Quote(filepath.ToSlash(rel)), strconv.Quote(strings.ReplaceAll(w, litMark, "${…}")))
		}
		return ""
	}
	return rest
}
