package sandbox

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// The mount table says which paths lie on local file systems, by their mount points only, and
// is read again after a mount: a tmpfs mounted under a FUSE-like (here: unknown) mount point
// is local, what is beside it under that mount point is not.
func TestMountTableLocal(t *testing.T) {
	pts := parseMountinfo([]byte("22 1 254:0 / / rw - ext4 /dev/vda rw\n" +
		"30 22 0:40 / /mnt/remote rw - nfs4 srv:/x rw\n" +
		"31 30 0:41 / /mnt/remote/cache rw - tmpfs tmpfs rw\n" +
		"32 22 0:42 / /home/me/a\\040b rw - fuse.sshfs me@h: rw\n"))
	mt := &mountTable{points: pts}
	for p, want := range map[string]bool{
		"/": true, "/home/me/ws": true, "/mnt/remote": false, "/mnt/remote/x/y": false,
		"/mnt/remote/cache/z": true, "/mnt/remotely": true, "/home/me/a b/c": false, "/home/me/a": true,
	} {
		if got := mt.local(p); got != want {
			t.Errorf("local(%q) = %v, want %v", p, got, want)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	var live mountTable
	defer live.close()
	dir := t.TempDir()
	if _, ok := live.current(); !ok {
		t.Fatal("serve's mount table could not be read")
	}
	if err := unix.Mount("x", dir, "ramfs", 0, ""); err != nil {
		t.Skipf("mount: %v", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	mt2, ok := live.current()
	if !ok {
		t.Fatal("serve's mount table could not be read again")
	}
	found := false
	for _, m := range mt2.points {
		found = found || m.dir == dir
	}
	if !found || !mt2.local(filepath.Join(dir, "f")) {
		t.Errorf("a mount made after the first read is not in the table read again (%v)", found)
	}
}
