// Package lazy compiles a package's regular expressions at their first use instead of at
// package initialisation: Go runs every linked package's init before main, so a pattern that
// only verify, init or the harness uses would otherwise be compiled at every start of serve,
// on the way to a client's first answer.
package lazy

import (
	"regexp"
	"sync"
)

// Regexp returns a function compiling pattern once, at its first call, panicking as
// regexp.MustCompile does on a bad pattern (every literal pattern given to it in the tree is
// compiled by TestEveryPatternCompiles).
func Regexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}
