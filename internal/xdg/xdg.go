// Package xdg reads the XDG base directory variables (XDG_CONFIG_HOME, XDG_STATE_HOME,
// XDG_CACHE_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR). The specification says a relative value is
// invalid and is to be ignored: taken as given it names a place under whatever directory the
// program runs in, a project's git work tree for init (backups of configs holding secrets,
// policies, a client config no client reads: atk33 F6). Nothing else reads these variables
// (internal/lint checks).
package xdg

import (
	"os"
	"path/filepath"
)

// Dir is the value of the XDG variable name when it is an absolute path, else "" (unset, empty
// or relative alike): the caller falls back to its default under the home.
func Dir(name string) string {
	v := os.Getenv(name)
	if !filepath.IsAbs(v) && !mutated("xdg-absolute-only") {
		return ""
	}
	return v
}
