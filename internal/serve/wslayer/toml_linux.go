package wslayer

import (
	"strings"
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
			r, n, ok := hexEscape(s, i, e, false)
			if !ok {
				b.WriteByte('\\') // not valid TOML: kept, the path names nothing mise loads
				b.WriteByte(e)
				continue
			}
			b.WriteRune(r)
			i += n
		case strings.IndexByte("btnfre", e) >= 0:
			b.WriteByte(' ')
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
