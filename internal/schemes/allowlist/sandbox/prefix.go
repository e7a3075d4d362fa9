package sandbox

import (
	"path/filepath"
	"strings"
)

// ExposedSecrets names the home or secrets directory that reading dir would open ("" when
// none): dir is, or holds, a home (the user's, /root, /home) or /etc, or lies in one of their
// dot directories (~/.ssh, ~/.cargo: where tools keep credentials). verify's MS109 judges
// read_paths with it; the executor narrows a binary's install prefix with it.
func ExposedSecrets(dir, home string) string {
	dir = filepath.Clean(dir)
	for _, s := range []string{home, "/root", "/home", "/etc"} {
		if s != "" && (dir == s || strings.HasPrefix(s+"/", dir+"/") || strings.HasPrefix(dir, s+"/.")) {
			return s
		}
	}
	return ""
}
