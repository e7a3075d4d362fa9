package policy

import (
	"os"
	"path/filepath"
)

// Command is one allowlisted binary, pinned by its path and sha256 (the allowlist scheme's
// commands; init pins them).
type Command struct {
	Name     string   `toml:"name" json:"name"`
	Path     string   `toml:"path" json:"path"`
	SHA256   string   `toml:"sha256" json:"sha256"`
	DenyArgs []string `toml:"deny_args,omitempty" json:"deny_args,omitempty"`
	// AllowOutsidePaths lets path-like arguments resolve outside the workspace (reads only:
	// the kernel still confines writes to the workspace).
	AllowOutsidePaths bool `toml:"allow_outside_paths,omitempty" json:"allow_outside_paths,omitempty"`
}

// VenvOf is the Python virtual environment a command's path lies in (the bin/.. of a path
// whose directory is bin and holds pyvenv.cfg beside it), or "" when none. A venv's python is
// a link to its base interpreter, which finds the venv (its packages, its sys.prefix) only when
// started by the link's path: init keeps that path in the policy, and serve starts the
// binary it links to under that path as argv[0].
func VenvOf(path string) string {
	if !filepath.IsAbs(path) || filepath.Base(filepath.Dir(path)) != "bin" {
		return ""
	}
	root := filepath.Dir(filepath.Dir(path))
	if st, err := os.Lstat(filepath.Join(root, "pyvenv.cfg")); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return root
}
