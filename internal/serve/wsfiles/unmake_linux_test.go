//go:build linux

package wsfiles

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// A write_file refused below the top of the path it made (at a protected directory, or past the
// commit's depth bound) leaves none of the directories its commit made: the clean-up stopped at
// the first level that had not been made, and left those above it (attack round atk24c, F3: 1,
// 2 and 256 directories left).
func TestRefusedWriteLeavesNoDirs(t *testing.T) {
	for _, p := range []string{".config/systemd/user/evil.service", "z/z/.git/hooks/pre-commit", strings.Repeat("x/", 300) + "deep", "w/w/CLAUDE.md"} {
		f, ws, _ := newFS(t)
		if _, err := f.WriteFile(bg, executor.Call{}, p, []byte("pwn\n")); err == nil {
			t.Fatalf("%.40q: written, want refused", p)
		}
		ents, _ := os.ReadDir(ws)
		var left []string
		for _, e := range ents {
			n := 0
			_ = filepath.WalkDir(filepath.Join(ws, e.Name()), func(string, os.DirEntry, error) error { n++; return nil })
			left = append(left, e.Name()+" ("+strconv.Itoa(n)+" entries)")
		}
		if len(left) > 0 {
			t.Errorf("%.40q refused but left %v in the workspace", p, left)
		}
	}
}
