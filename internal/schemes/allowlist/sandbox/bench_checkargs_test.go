//go:build linux

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// The argument check's share of a call: resolving paths, the protect list and the git set-up.
func BenchmarkCheckArgs(b *testing.B) {
	e, ws, _ := testExec(&testing.T{}, nil)
	defer os.RemoveAll(filepath.Dir(ws))
	os.WriteFile(filepath.Join(ws, "f"), []byte("a\n"), 0o644)
	exec.Command("git", "init", "-q", ws).Run()
	for _, c := range []struct {
		name string
		prog string
		args []string
	}{{"wc f", "wc", []string{"f"}}, {"sort -o out f", "sort", []string{"-o", "out", "f"}}, {"unknown program", "sed", []string{"-n", "p", "f"}}} {
		b.Run(c.name, func(b *testing.B) {
			pc := e.cmd(c.prog)
			for b.Loop() {
				if _, err := e.checkArgs(pc, c.args); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("read-only binds (every call)", func(b *testing.B) {
		for b.Loop() {
			e.protectedNow(true)
		}
	})
}
