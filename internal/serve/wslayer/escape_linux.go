package wslayer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// hexEscape decodes the escape whose letter e ('x', 'u' or 'U') is at s[i]: \xHH, \uHHHH,
// \UHHHHHHHH and, where braces (JS), \u{H…}. It gives the rune (a control character as a
// space: it separates words of a command line), how many bytes after the letter it used, and
// false when the language would not decode it. One place for the literal and TOML readers.
func hexEscape(s string, i int, e byte, braces bool) (rune, int, bool) {
	n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
	hex := s[i+1 : min(len(s), i+1+n)]
	brace := false
	if braces && e == 'u' && strings.HasPrefix(s[i+1:], "{") {
		if j := strings.IndexByte(s[i+1:], '}'); j > 0 {
			hex, n, brace = s[i+2:i+1+j], j+1, true
		}
	}
	v, err := strconv.ParseUint(hex, 16, 32)
	if err != nil || len(hex) != n && !brace || !utf8.ValidRune(rune(v)) {
		return 0, 0, false
	}
	if r := rune(v); r >= ' ' {
		return r, n, true
	}
	return ' ', n, true
}
