package policy

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// AbsFix is the fix for a path that is not absolute: fix itself, and for a path written from
// the home (~/ai-workspace: TOML does not expand ~) the path as it expands here (trial36 F9).
func AbsFix(p, fix string) string {
	rest, ok := strings.CutPrefix(p, "~/")
	if !ok || mutated("policy-fix-generic") {
		return fix
	}
	home, err := os.UserHomeDir()
	if err != nil || !filepath.IsAbs(home) {
		return fix + " (~ is not expanded)"
	}
	return fmt.Sprintf("%s: ~ is not expanded, write %q", fix, filepath.Join(home, rest))
}

// SHA256Fix is the fix for a missing or malformed sha256 of the command name at path: pin the
// binary by its absolute path (path itself when it is one; else where PATH finds name here, else
// /usr/bin/NAME as the path's own fix says). "sha256sum wc" fails (trial36 F9).
func SHA256Fix(name, path string) string {
	if !mutated("policy-fix-generic") && (!filepath.IsAbs(path) || filepath.Clean(path) != path) {
		path = "/usr/bin/" + name
		if lp, err := exec.LookPath(name); err == nil && filepath.IsAbs(lp) && ValidCommandName(name) {
			path = lp
		}
	}
	return "pin it: sha256sum " + path
}
