//go:build linux

package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A small file costs at least a block against the quota, as it does on disk (attack round
// atk24c, F4: 6,000 one-byte files were charged 6 kB and took 24 MB under a 1 MiB quota). Here
// 300 one-byte files under a 256 KiB quota: 64 blocks' worth are applied, the rest refused.
func TestSmallFilesChargedABlock(t *testing.T) {
	ws := t.TempDir()
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		os.WriteFile(filepath.Join(l.Upper, fmt.Sprintf("f%03d", i)), []byte("x"), 0o644)
	}
	w, err := l.Commit(Rules{Quota: 256 << 10, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(ws)
	if len(ents) > 64 {
		t.Errorf("%d one-byte files applied under a 256 KiB quota (at most 64 blocks of 4 KiB)", len(ents))
	}
	if len(w.Refused)+w.RefusedMore == 0 {
		t.Errorf("no file refused past the quota: %d applied", len(ents))
	}
	if len(ents) == 0 {
		t.Error("nothing applied: the quota holds 64 such files")
	}
}
