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
// zero-width and other format characters, C1 controls, unassigned runes (atk40 F3). Go's encoder
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
// non-ASCII rune that unicode.IsPrint refuses written as \uXXXX (a surrogate pair above the
// Basic Multilingual Plane); b itself when it has none.
func escapeUnprintable(b []byte) []byte {
	first := -1
	for i := 0; i < len(b); {
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if n > 1 && !unicode.IsPrint(r) {
			first = i
			break
		}
		i += n
	}
	if first < 0 {
		return b
	}
	out := make([]byte, 0, len(b)+32)
	out = append(out, b[:first]...)
	for i := first; i < len(b); {
		if b[i] < utf8.RuneSelf {
			out = append(out, b[i])
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if n == 1 || unicode.IsPrint(r) { // an invalid byte is kept as it is: not ours to change
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		if r1, r2 := utf16.EncodeRune(r); r1 != utf8.RuneError {
			out = appendU(appendU(out, r1), r2)
		} else {
			out = appendU(out, r)
		}
		i += n
	}
	return out
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
