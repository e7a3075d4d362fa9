package lint

import (
	"os/exec"
	"strings"
	"testing"
)

// notImported are packages that must not depend on another, directly or not: the reason is
// what each says. verify speaks of serve's fixed bounds through internal/bounds, never by
// importing the MCP server.
var notImported = []struct{ pkg, dep, why string }{
	{"./internal/verify", "github.com/mcpsandbox/mcpsandbox/internal/serve", "verify reads serve's fixed bounds from internal/bounds, not from the MCP server package"},
}

func TestPackagesDoNotImport(t *testing.T) {
	for _, n := range notImported {
		cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", n.pkg)
		cmd.Dir = repoRoot(t)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", n.pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if dep == n.dep {
				t.Errorf("%s imports %s (directly or not): %s", n.pkg, n.dep, n.why)
			}
		}
	}
}
