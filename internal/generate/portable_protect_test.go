package generate

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every project file init can write (the files a team commits with init --portable) is on the
// default protect list, itself or a directory holding it: a sandboxed call must never rewrite
// what the next session of a client starts (trial38 F1).
func TestProjectFilesAreProtected(t *testing.T) {
	for _, c := range Clients() {
		for _, s := range c.Scopes() {
			rel, ok := strings.CutPrefix(c.Paths[s], "{project}/")
			if !ok {
				continue
			}
			covered := false
			for p := rel; p != "." && p != "/"; p = filepath.Dir(p) {
				covered = covered || slices.Contains(policy.DefaultProtect, filepath.ToSlash(p))
			}
			if !covered {
				t.Errorf("%s:%s writes %s, which the default protect list does not cover", c.ID, s, rel)
			}
		}
	}
}
