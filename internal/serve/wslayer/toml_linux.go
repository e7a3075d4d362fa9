package wslayer

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// tomlBasic decodes a TOML basic string's escapes as mise's parser does (attack round atk41
// F2: `_.source = "tools\u002Fx.sh"` sourced tools/x.sh while the follower protected a name no
// one writes): \b \t \n \f \r \e (white space here), \" \\, \xHH, \uHHHH, \UHHHHHHHH, and in a
// multi-line string a line-ending backslash, which drops the white space and newlines after it.
func tomlBasic(s string, multi bool) string {
	if strings.IndexByte(s, '\\') < 0 || mutated("workspace-follow-mise-toml-escapes") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		i++
		switch e := s[i]; {
		case multi && (e == ' ' || e == '\t' || e == '\r' || e == '\n'):
			for i+1 < len(s) && strings.IndexByte(" \t\r\n", s[i+1]) >= 0 {
				i++
			}
		case e == 'x' || e == 'u' || e == 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			hex := s[i+1 : min(len(s), i+1+n)]
			v, err := strconv.ParseUint(hex, 16, 32)
			if err != nil || len(hex) != n || !utf8.ValidRune(rune(v)) {
				b.WriteByte('\\') // not valid TOML: kept, the path names nothing mise loads
				b.WriteByte(e)
				continue
			}
			if r := rune(v); r < ' ' {
				b.WriteByte(' ')
			} else {
				b.WriteRune(r)
			}
			i += n
		case strings.IndexByte("btnfre", e) >= 0:
			b.WriteByte(' ')
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
