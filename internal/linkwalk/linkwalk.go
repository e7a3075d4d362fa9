// Package linkwalk steps through a path one name at a time, as the kernel resolves it: the walker
// looks at each name, enters it or follows it as a link, and always knows the real directory it
// is in. What to check on each name is the caller's.
package linkwalk

import (
	"path"
	"strings"
)

// Walk is one resolution under way, from /.
type Walk struct {
	cur  string
	rest []string
}

// New starts the resolution of the absolute path p.
func New(p string) *Walk { return &Walk{cur: "/", rest: strings.Split(p, "/")} }

// Next returns the next name to look at, under the real directory the walk is in, or false when
// the path is resolved. Empty names, "." and ".." are taken on the way (".." of a real directory
// is its parent: nothing the walk is in is a link).
func (w *Walk) Next() (string, bool) {
	for len(w.rest) > 0 {
		c := w.rest[0]
		w.rest = w.rest[1:]
		switch c {
		case "", ".":
		case "..":
			w.cur = path.Dir(w.cur)
		default:
			return path.Join(w.cur, c), true
		}
	}
	return "", false
}

// Enter goes into next, a name Next returned that is no link.
func (w *Walk) Enter(next string) { w.cur = next }

// Follow goes on from the link Next returned last by way of its target.
func (w *Walk) Follow(target string) {
	if strings.HasPrefix(target, "/") {
		w.cur = "/"
	}
	w.rest = append(strings.Split(target, "/"), w.rest...)
}

// Dir is the real directory the walk is in: once Next says false, where the path resolves.
func (w *Walk) Dir() string { return w.cur }
