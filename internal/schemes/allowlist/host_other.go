//go:build !linux

package allowlist

import (
	"context"
	"os"
	"runtime"

	"github.com/mcpsandbox/mcpsandbox/internal/verify"
)

// hostChecks: the allowlist scheme's layers are Linux kernel features; here only the docker
// and e2b schemes can serve.
func hostChecks(context.Context) []verify.Check {
	return []verify.Check{{Name: "kernel", Value: runtime.GOOS,
		Advice: "the allowlist scheme needs Linux (Landlock, seccomp, namespaces); use the docker scheme (Docker Desktop) or e2b here"}}
}

// ownerUID: not known here (-1); the allowlist scheme does not serve on this OS.
func ownerUID(os.FileInfo) int { return -1 }

// unwritableToMe: the allowlist scheme does not serve on this OS.
func unwritableToMe(string) bool { return false }
