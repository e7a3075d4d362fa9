package wslayer

import (
	"path/filepath"
	"strconv"
	"strings"
)

// prefixMatch says why rel (a path from the workspace's root) is protected by a name prefix of
// m (by folded directory, from the root), "" when none matches: reason gets the config's name,
// quoted, from the root.
func (g *gitGuard) prefixMatch(m map[string][]namePrefix, rel string, reason func(by string) string) string {
	if len(m) == 0 {
		return ""
	}
	parts := strings.Split(fold(rel), "/")
	for i, part := range parts {
		for _, r := range m[strings.Join(parts[:i], "/")] {
			if strings.HasPrefix(part, r.prefix) {
				by, _ := filepath.Rel(g.ws, r.by)
				return reason(strconv.Quote(filepath.ToSlash(by)))
			}
		}
	}
	return ""
}
