package policy

import (
	"errors"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
)

// CompileGlob compiles a deny_args pattern. Unlike path.Match, '*' also matches '/', because an
// argument such as "--files0-from=/etc/passwd" is one string, not a path: "*" any run, "?" one
// character, "[...]" a class ("[!...]" negated). The whole argument must match. A pattern is
// compiled once per process: the policy's validation and the executor both compile the same
// ones on the way to serve's first answers (a *regexp.Regexp is safe for concurrent use).
func CompileGlob(g string) (*regexp.Regexp, error) {
	if re, ok := globs.Load(g); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := compileGlob(g)
	if err == nil && globsCached.Add(1) <= maxCachedGlobs {
		globs.Store(g, re)
	}
	return re, err
}

// maxCachedGlobs bounds the cache: a policy's patterns are a few hundred at most; past the bound a
// pattern is compiled each time, as before.
const maxCachedGlobs = 4096

var (
	globs       sync.Map // pattern -> *regexp.Regexp
	globsCached atomic.Int64
)

func compileGlob(g string) (*regexp.Regexp, error) {
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
			// the byte as it is: string(c) made a rune of it, and a name's UTF-8 (café) became
			// another name (cafÃ©) that no path matched (review41 #6)
			if mutated("policy-glob-bytes-as-runes") {
				b.WriteString(regexp.QuoteMeta(string(rune(c))))
			} else {
				b.WriteString(regexp.QuoteMeta(g[i : i+1]))
			}
		}
	}
	b.WriteString(`)$`)
	return regexp.Compile(b.String())
}
