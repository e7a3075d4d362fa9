package projectpolicy

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A portable entry runs `mcpsandbox` by name: what starts is whatever the client's PATH finds
// first, looked up again at each start (atk39b F2). A sandboxed call writes in the checkout, so
// an mcpsandbox found there, or in a directory a PATH entry reaches there (a relative one, or
// an empty one: the working directory, which is the checkout where Claude Code and Gemini CLI
// start the server), may be the call's program, run on the host with no sandbox at all.

// CheckExecutable refuses to serve when serve's own executable (exe, its real path) lies inside
// one of dirs (the checkout, the workspace: where sandboxed calls write): a call could replace
// it, and the client's next start would run the call's program unsandboxed.
func CheckExecutable(exe string, dirs ...string) error {
	if mutated("serve-project-exe-in-checkout") || exe == "" {
		return nil
	}
	real := policy.RealPath(exe)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if dr := policy.RealPath(d); within(real, dr) {
			return fmt.Errorf("refusing to serve: this mcpsandbox, %s, lies inside %s, where sandboxed calls write: a call could replace it, "+
				"and the next start would run the call's program on the host, unsandboxed. Install mcpsandbox outside it "+
				"(e.g. `CGO_ENABLED=0 go install ./cmd/mcpsandbox` puts it in $(go env GOPATH)/bin) and have the client's PATH find that one", real, dr)
		}
	}
	return nil
}

// PathAhead is what a lookup of name on pathList tries before the directory that holds it
// (found: its path, "" = none, when every entry is tried) that a sandboxed call could fill:
// relative entries and empty ones (the working directory, the checkout a client starts serve
// in), and those inside checkout. An mcpsandbox a call writes there is found first.
func PathAhead(pathList, name, checkout string) (risky []string, found string) {
	if mutated("init-portable-path-ahead") {
		return nil, ""
	}
	co := policy.RealPath(checkout)
	for _, d := range filepath.SplitList(pathList) {
		switch {
		case d == "":
			risky = append(risky, `"" (an empty entry: the working directory)`)
			continue
		case !filepath.IsAbs(d):
			risky = append(risky, fmt.Sprintf("%q (relative: to the working directory)", d))
			continue
		case co != "" && within(policy.RealPath(d), co):
			risky = append(risky, fmt.Sprintf("%s (inside the checkout)", d))
			continue
		}
		if f := filepath.Join(d, name); executable(f) {
			return risky, f
		}
	}
	return risky, ""
}

func executable(f string) bool {
	if runtime.GOOS == "windows" {
		for _, ext := range []string{".exe", ".bat", ".cmd", ""} {
			if st, err := os.Stat(f + ext); err == nil && !st.IsDir() {
				return true
			}
		}
		return false
	}
	st, err := os.Stat(f)
	return err == nil && !st.IsDir() && st.Mode().Perm()&0o111 != 0
}

// PathAheadError says which PATH entries come before the mcpsandbox found, and the fix (then:
// what to do after it, e.g. "run init again").
func PathAheadError(who string, risky []string, found, then string) error {
	where := "before any directory holding mcpsandbox"
	if found != "" {
		where = "ahead of " + filepath.Dir(found) + ", where mcpsandbox is found"
	}
	return fmt.Errorf("%s: PATH holds %s %s: the committed entry runs `mcpsandbox` by name, so a client started in the checkout with this PATH "+
		"runs an mcpsandbox a sandboxed call writes there (bin/mcpsandbox, say) instead, on the host, unsandboxed. "+
		"Remove %s from PATH (or put it after %s) in your shell's startup file (and the client's environment), then %s",
		who, strings.Join(risky, ", "), where, map[bool]string{true: "that entry", false: "those entries"}[len(risky) == 1], map[bool]string{true: filepath.Dir(found), false: "the directory holding mcpsandbox"}[found != ""], then)
}
