package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// The seeded npm cache links the client's content, and never by a hard link to a file the
// server's uid could write (it would write the client's cache through it).
func TestSeedNeverLinksWritableFiles(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("hard links are made only when wrap runs as root")
	}
	src, dst := t.TempDir(), filepath.Join(t.TempDir(), "seed")
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte(name), mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(p, mode)
		os.Chown(p, uid, uid)
		return p
	}
	safe := mk("root-0644", 0o644, 0)
	mine := mk("server-owned", 0o644, 65534)
	open := mk("world-writable", 0o666, 0)
	if err := linkTree(src, dst, 65534); err != nil {
		t.Fatal(err)
	}
	same := func(a string) bool {
		x, _ := os.Stat(a)
		y, err := os.Lstat(filepath.Join(dst, filepath.Base(a)))
		return err == nil && os.SameFile(x, y)
	}
	if !same(safe) {
		t.Error("a root-owned 0644 file was not hard-linked (the fast seed)")
	}
	for _, p := range []string{mine, open} {
		if same(p) {
			t.Errorf("%s is hard-linked into the server's cache: the server could write the client's file", filepath.Base(p))
		}
		if b, err := os.ReadFile(filepath.Join(dst, filepath.Base(p))); err != nil || string(b) != filepath.Base(p) {
			t.Errorf("%s not seeded: %q %v", filepath.Base(p), b, err)
		}
	}
}
