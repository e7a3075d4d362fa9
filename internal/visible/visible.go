// Package visible shows terminal controls in text a client prints, instead of letting them act.
package visible

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Text is text as serve sends it in a result's text content: what a program printed, a file
// read, a file's name, with every terminal control shown instead of done. Clients that run in a
// terminal (Claude Code, Gemini CLI, Codex) print a result's text there, so an escape sequence
// in a command's output or a file name would act on the user's terminal: OSC 52 writes the
// clipboard, OSC 8 makes a link whose text is not its target, ESC[8m hides text the model still
// reads, a lone CR overwrites a line, a title sequence or a bell. Each C0 control but tab and
// newline (and CR before a newline) becomes its Unicode control picture (ESC → ␛, BEL → ␇, a
// lone CR → ␍), DEL ␡, and a C1 control (U+0080–U+009F, the 8-bit forms: U+009B is CSI) ␛
// and its 7-bit letter. The structured result keeps the bytes as they are (JSON escapes them).
func Text(s string) string {
	if mutated("result-text-controls") {
		return s
	}
	i := firstControl(s)
	if i < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		switch {
		case c == '\t' || c == '\n' || c == '\r' && i+1 < len(s) && s[i+1] == '\n':
			b.WriteByte(c)
		case c < 0x20:
			b.WriteRune(rune(0x2400 + int(c)))
		case c == 0x7f:
			b.WriteRune('\u2421')
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			b.WriteRune('\u241b')
			b.WriteByte(s[i+1] - 0x40)
			i += 2
			continue
		default:
			// anything else, valid UTF-8 or not, as it is (JSON replaces an invalid byte)
			_, n := utf8.DecodeRuneInString(s[i:])
			b.WriteString(s[i : i+n])
			i += n
			continue
		}
		i++
	}
	return b.String()
}

// firstControl is the index of the first byte Visible changes, -1 if none.
func firstControl(s string) int {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\t' || c == '\n':
		case c == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				return i
			}
		case c < 0x20 || c == 0x7f:
			return i
		case c == 0xc2 && i+1 < len(s) && s[i+1] >= 0x80 && s[i+1] <= 0x9f:
			return i
		}
	}
	return -1
}

// Name is a name or path as serve prints it in a line of its own (a listing's entry, a file's
// path, a picture's name): as it is when it is plain printable text, else Go-quoted, so that a
// newline, U+2028, a bidirectional override or an invalid byte in a name a sandboxed program
// chose cannot end serve's line and start one that reads as serve's (a forged entry, a forged
// "[workspace: …]" summary). A name that starts with a quote is quoted too, so a quoted form is
// never ambiguous.
func Name(s string) string {
	if mutated("result-names-raw") || plainName(s) {
		return s
	}
	return strconv.Quote(s)
}

func plainName(s string) bool {
	if s == "" || s[0] == '"' {
		return false
	}
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return false
			}
		}
		if r != ' ' && !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// Line is text from outside (a wrapped server's stderr line, an excerpt of its answer) as a
// line of a log or a terminal where the tool's own lines are read: Text, and besides every
// rune that is not printable shown as its escape (\u2028), newlines included. A terminal does
// not end a line at U+2028 or U+2029, but many log readers do (Python's splitlines, editors,
// macOS text views): the text after one read as a line of its own, without the marker that
// says whose it is; a bidirectional override shows a line in another order than its bytes
// (atk36b F3).
func Line(s string) string { return shownRunes(Text(s), false) }

// Lines is Line for text whose newlines are its own (a block printed indented under a
// heading): newlines and tabs kept, every other rune that is not printable shown.
func Lines(s string) string { return shownRunes(Text(s), true) }

// shownRunes shows every rune of s but a space and a tab (and a newline when keepNewlines)
// that is not printable as its Go escape.
func shownRunes(s string, keepNewlines bool) string {
	if mutated("log-line-unprintable") {
		return s
	}
	keep := func(r rune) bool {
		return r == ' ' || r == '\t' || keepNewlines && r == '\n' || unicode.IsPrint(r)
	}
	if strings.IndexFunc(s, func(r rune) bool { return !keep(r) }) < 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if keep(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRuneToASCII(r) // '\u2028', '\n'
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
