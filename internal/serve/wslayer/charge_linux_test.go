//go:build linux

package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
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

// A call whose changes do not fit in the workspace's file system has none applied, and the
// result says why (trial39 F12: applied file by file, the small file landed and the large one
// was cut, with the call's exit code 0). Here a 1 MiB tmpfs workspace, a 5-byte file and a
// 3 MB one. Red with mutant workspace-space-unchecked.
func TestCommitThatDoesNotFitAppliesNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("SKIP: mounting a small file system for the workspace needs root")
	}
	ws := t.TempDir()
	if err := unix.Mount("tmpfs", ws, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("SKIP: no tmpfs here: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(ws, unix.MNT_DETACH) })
	l, err := New(t.TempDir(), ws)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(l.Upper, "keep.txt"), []byte("keep\n"), 0o644)
	os.WriteFile(filepath.Join(l.Upper, "big.bin"), make([]byte, 3<<20), 0o644)
	w, err := l.Commit(Rules{UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(ws)
	if len(ents) != 0 || w.Committed != 0 || !strings.Contains(w.Discarded, "left as it was") || !strings.Contains(w.Discarded, "free") {
		t.Fatalf("%d entries in the workspace, %d applied, discarded %q: want nothing applied and why", len(ents), w.Committed, w.Discarded)
	}
	t.Log(Summary(w))
}
