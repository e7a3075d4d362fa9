package sandbox

import (
	"os"
	"path/filepath"
	"strings"
)

// runtimeSubdirs are where an install prefix keeps what its programs load at run time.
var runtimeSubdirs = []string{"lib", "lib64", "lib32", "libexec", "share"}

// runtimeDirs are the directories beside the system's that a binary at real (symlinks
// resolved) may read at run time: its install prefix, bin/.. (a Python's stdlib, a node's
// lib/node_modules). A prefix that is, holds or lies in a home's dot directory (~ for ~/bin/tool,
// ~/.cargo for ~/.cargo/bin/rg, where credentials live) is narrowed to its runtime subdirs
// that exist, and a home itself gives none: pinning a binary must not open a user's secrets.
func runtimeDirs(real, home string) []string {
	prefix := filepath.Dir(filepath.Dir(real))
	if prefix == "/" {
		return nil
	}
	exposed := ExposedSecrets(prefix, home)
	if exposed == "" || mutated("pin-prefix-secrets") {
		return []string{prefix}
	}
	if prefix == exposed || strings.HasPrefix(exposed+"/", prefix+"/") {
		return nil // ~/bin/tool: ~/lib or ~/share are a user's files, not an install's
	}
	var out []string
	for _, sub := range runtimeSubdirs {
		d := filepath.Join(prefix, sub)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}
