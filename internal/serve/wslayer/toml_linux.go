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
	return decodeEscapes(s, multi, false)
}

// decodeEscapes decodes a TOML, JSON or YAML double-quoted string's escapes: \xHH, \uHHHH,
// \UHHHHHHHH the character, \c the c, in a multi-line string a line-ending backslash drops the
// white space after it; a control escape (\b \t \n \f \r \e) is a space, or where lines (a
// program's text) \n, \r and \u000a a newline and \t a tab.
func decodeEscapes(s string, multi, lines bool) string {
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
				b.WriteByte('\\') // not valid: kept, the path names nothing mise loads
				b.WriteByte(e)
				continue
			}
			if hex := strings.TrimLeft(s[i+1:i+1+n], "0"); lines && (strings.EqualFold(hex, "a") || strings.EqualFold(hex, "d")) {
				r = '\n'
			}
			b.WriteRune(r)
			i += n
		case lines && (e == 'n' || e == 'r'):
			b.WriteByte('\n')
		case lines && e == 't':
			b.WriteByte('\t')
		case strings.IndexByte("btnfre", e) >= 0:
			b.WriteByte(' ')
		default:
			b.WriteByte(e)
		}
	}
	return b.String()
}
