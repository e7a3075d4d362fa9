package wslayer

import (
	"strings"
)

// The setter scan (noteSetters) read a shell text's names as spelled, but bash takes a name
// from the word as it joins it: quotes and backslashes removed (`export "APP_DIR"`, `\export
// APP_DIR`, `set -"a"`, `export APP_DI"R"=…`, `env AP\P_DIR=…`), $'…' decoded (`export
// $'APP\x5fDIR'=…`), braces expanded (`export APP_{DIR,X}=…`, `APP_DI{R..R}`): a started
// script's ${APP_DIR:-app} was taken for app while bash ran lib/main.py (atk46a F4). The scan
// also reads the text with its quoting removed, every $'…' decoded, and a name's braces expanded.

// shellJoined is text with bash's quote removal done context-free: a backslash-newline
// dropped, a `$` opening $'…' or $"…" dropped, and every quote and backslash dropped. It is
// read beside the text, never instead: a quote in a comment or a here-document cannot hide a
// name (nothing is skipped), and a name it joins that bash would not is one more name only.
func shellJoined(text string) string {
	text = strings.ReplaceAll(text, "\\\n", "")
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '"' || c == '\'' || c == '\\':
		case c == '$' && i+1 < len(text) && (text[i+1] == '"' || text[i+1] == '\''):
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// ansiSetters records every name each $'…' of text spells, decoded (`$'APP\x5fDIR'`): read at
// each `$'`, whatever quoting the text has around it.
func (f *follower) ansiSetters(path, text string) {
	for i := 0; !f.settersFull; {
		j := strings.Index(text[i:], "$'")
		if j < 0 {
			return
		}
		v, end := ansiQuote(text, i+j)
		if strings.IndexByte(text[i+j:min(end, len(text))], '\\') >= 0 {
			f.spelledSetters(path, v)
		}
		i += j + 2
	}
}

// maxBraceWords bounds the words one brace expansion gives (past it every name may be set),
// maxBraceWord the word expanded (a name is shorter): the scan's cost stays per byte.
const (
	maxBraceWords = 64
	maxBraceWord  = 128
)

// braceSetters records the names the word w (a name, or a NAME=… word's part before its `=`)
// gives under bash's brace expansion (`APP_{DIR,X}`, `APP_DI{R..R}`), when it has braces.
func (f *follower) braceSetters(path, w string) {
	if !strings.Contains(w, "{") || len(w) > maxBraceWord || mutated("workspace-setters-braces") {
		return
	}
	words, ok := braceExpand(w, maxBraceWords)
	if !ok {
		f.settersFull = true
		return
	}
	for _, e := range words {
		if n := nameBefore(e+"=", len(e)); n != "" && len(n) == len(e) {
			f.setter(n, path)
		}
	}
}
