// Package casefold is the one place that says when two runes are the same letter regardless of
// case: the audit's key check (JSON keys read as Go's encoding/json would match them) and the
// workspace's protected names (a case-insensitive filesystem's lookup) must agree on it.
package casefold

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Rune is r's case-folding class: the smallest rune of its unicode.SimpleFold orbit (ſ and s
// are S, the Kelvin sign and k are K).
func Rune(r rune) rune {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}
	least := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		least = min(least, f)
	}
	return least
}

// String is s with each rune replaced by its class.
func String(s string) string { return strings.Map(Rune, s) }
