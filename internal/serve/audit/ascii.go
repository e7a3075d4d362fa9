package audit

import (
	"encoding/json"
	"strconv"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// marshal is json.Marshal with every rune a terminal would not print as itself written as its
// \u escape: bidirectional controls (U+202A–U+202E, U+2066–U+2069, U+200E/U+200F, U+061C),
// zero-width and other format characters, C1 controls, unassigned runes (atk40 F3), and the
// printable runes that render as nothing (variation selectors, Hangul fillers, combining marks
// with no base: hidden, atk41 F6). Go's encoder
// writes them raw, so `tail`, `less` and `grep` of the log laid a tool name or an argument
// that a model chose out in another order than its bytes. A JSON reader decodes the escape to
// the same rune, so the entry's content is unchanged; its hash covers the bytes as written.
func marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || mutated("audit-bidi-raw") {
		return b, err
	}
	return escapeUnprintable(b), nil
}

// escapeUnprintable is b (JSON, whose non-ASCII bytes lie in strings only) with every valid
// non-ASCII rune that does not render visibly as itself (hidden) written as \uXXXX (a surrogate
// pair above the Basic Multilingual Plane); b itself when it has none.
func escapeUnprintable(b []byte) []byte { return escapeRunes(b, true) }

// marshalPrintOnly is marshal as serve wrote lines from atk40 F3 to atk41 F6: only the runes
// unicode.IsPrint refuses escaped. Verify reads such lines with it (their hash covers the
// ignorable runes raw).
func marshalPrintOnly(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return b, err
	}
	return escapeRunes(b, false), nil
}

// escapeRunes escapes what hidden says is hidden; with ignorables false, only what
// unicode.IsPrint refuses.
func escapeRunes(b []byte, ignorables bool) []byte {
	var out []byte // made at the first rune to escape
	var prev rune
	prevShown, marks := true, 0
	for i := 0; i < len(b); {
		r, n := rune(b[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(b[i:]) // an invalid byte (n == 1) is kept as it is: not ours to change
		}
		esc := n > 1 && !unicode.IsPrint(r)
		if ignorables {
			// DEL too: a terminal shows nothing for it, and JSON leaves it raw (atk42 F9)
			esc = n > 1 && hidden(r, prev, prevShown, marks) || r == 0x7f && !mutated("audit-escape-ignorables")
		}
		if unicode.In(r, unicode.Mn, unicode.Me) {
			marks++
		} else {
			marks = 0
		}
		prev, prevShown = r, !esc
		if esc && out == nil {
			out = append(make([]byte, 0, len(b)+32), b[:i]...)
		}
		switch {
		case out == nil:
		case !esc:
			out = append(out, b[i:i+n]...)
		default:
			if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
				out = appendU(appendU(out, r1), r2)
			} else {
				out = appendU(out, r)
			}
		}
		i += n
	}
	if out == nil {
		return b
	}
	return out
}

// hidden says whether the non-ASCII rune r, after prev (shown as itself or not) and marks
// combining marks before it, would not be seen as itself in a terminal: what unicode.IsPrint
// refuses, and what it passes though it renders as nothing (atk41 F6: variation selectors
// U+FE00–FE0F and U+E0100–E01EF, U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0,
// U+17B4, U+180B, the Braille blank U+2800: 256 selectors carry any bytes invisibly, and
// `exec(bytes(ord(c)-0xE0100 for c in '…'))` showed its string empty), and a combining mark with
// no letter or digit under it (it sits on the string's quote or on nothing) or past the fourth
// of a stack (marks piled over a line hide its text).
func hidden(r, prev rune, prevShown bool, marks int) bool {
	if !unicode.IsPrint(r) {
		return true
	}
	if mutated("audit-escape-ignorables") {
		return false
	}
	if unicode.In(r, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) || r == 0x2800 ||
		r == 0x16FE4 || r == 0x1D159 { // Khitan's filler, the null notehead: blank glyphs (atk42 F9)
		return true
	}
	if unicode.In(r, unicode.Mn, unicode.Me) {
		return marks >= 4 || !prevShown || marks == 0 && !unicode.In(prev, unicode.L, unicode.N)
	}
	return false
}

// appendU appends r (at most 0xFFFF) as \uXXXX.
func appendU(b []byte, r rune) []byte {
	b = append(b, `\u`...)
	h := strconv.FormatInt(int64(r), 16)
	for range 4 - len(h) {
		b = append(b, '0')
	}
	return append(b, h...)
}
