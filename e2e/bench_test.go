package e2e

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// BenchmarkBareExec is the raw baseline: fork+exec of wc with no sandbox and no MCP.
func BenchmarkBareExec(b *testing.B) {
	dir := b.TempDir()
	write(b, filepath.Join(dir, "f"), "a b c\n", 0o644)
	for b.Loop() {
		cmd := exec.Command("/usr/bin/wc", "f")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllowlistCall: run_allowed_command wc FILE through MCP stdio with every layer on.
func BenchmarkAllowlistCall(b *testing.B) {
	f := newFixture(b, nil)
	for b.Loop() {
		if res, r := f.call("wc", "notes.txt"); res.IsError || r.ExitCode != 0 {
			b.Fatalf("call failed: %s", text(res))
		}
	}
}
