// Package helper is the exec helper: the code that runs in the re-executed mcpsandbox binary,
// inside a call's namespaces, and applies Landlock, seccomp, the private mounts, the rlimits and
// the uid before it becomes the command (execveat of the descriptor serve hashed). It is a
// package of its own, with few dependencies, so that it runs in package initialisation before
// the rest of the binary is initialised (see init in helper_linux.go). Serve's side is
// internal/schemes/allowlist/sandbox.
package helper

import (
	"strings"
)

// Arg is argv[1] that makes the mcpsandbox binary act as the exec helper.
const Arg = "__sandbox-exec"

// Within reports whether the clean absolute path p is dir or below it. (Slash paths: the helper
// avoids path/filepath, whose late initialisation would delay it; see init.) It allocates
// nothing: serve asks it for every mount point against every prefix of a call's paths.
func Within(dir, p string) bool {
	return p == dir || len(p) > len(dir) && p[len(dir)] == '/' && strings.HasPrefix(p, dir)
}
