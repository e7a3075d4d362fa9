package policy

import (
	"errors"
	"regexp"
	"strings"
)

// CompileGlob compiles a deny_args pattern. Unlike path.Match, '*' also matches '/', because an
// argument such as "--files0-from=/etc/passwd" is one string, not a path: "*" any run, "?" one
// character, "[...]" a class ("[!...]" negated). The whole argument must match.
func CompileGlob(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				return nil, errors.New("unbalanced '[': close the class with ']'")
			}
			class := g[i+1 : i+1+j]
			if class == "" || class == "!" {
				return nil, errors.New("empty character class")
			}
			if class[0] == '!' {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString(`)$`)
	return regexp.Compile(b.String())
}
