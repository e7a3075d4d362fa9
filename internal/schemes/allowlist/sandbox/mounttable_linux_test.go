package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

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
	mt := pts
	for p, want := range map[string]bool{
		"/": true, "/home/me/ws": true, "/mnt/remote": false, "/mnt/remote/x/y": false,
		"/mnt/remote/cache/z": true, "/mnt/remotely": true, "/home/me/a b/c": false, "/home/me/a": true,
	} {
		if got := mt.local(p); got != want {
			t.Errorf("local(%q) = %v, want %v", p, got, want)
		}
	}
	// Symbolic links are followed, and the table asked before each step: a link on a local
	// disk into a mount that may not answer is not local (here the "nfs4" mount is a plain
	// directory the table names so: it is never looked up in).
	dir := t.TempDir()
	remote := filepath.Join(dir, "remote")
	os.MkdirAll(filepath.Join(remote, "sub"), 0o755)
	os.MkdirAll(filepath.Join(dir, "real", "d"), 0o755)
	os.Symlink(filepath.Join(remote, "sub"), filepath.Join(dir, "abs"))
	os.Symlink("../remote", filepath.Join(dir, "real", "rel"))
	os.Symlink("real/d", filepath.Join(dir, "ok"))
	os.Symlink("loop", filepath.Join(dir, "loop"))
	fake := parseMountinfo([]byte("22 1 254:0 / / rw - ext4 /dev/vda rw\n" +
		"30 22 0:40 / " + remote + " rw - nfs4 srv:/x rw\n"))
	for p, want := range map[string]bool{
		filepath.Join(dir, "real", "d", "f"): true, filepath.Join(dir, "ok", "f"): true,
		filepath.Join(dir, "missing", "f"): true, filepath.Join(dir, "abs", "f"): false,
		filepath.Join(dir, "real", "rel", "f"): false, filepath.Join(dir, "loop", "f"): false,
		filepath.Join(remote, "f"): false,
	} {
		if got := fake.localResolved(p, map[string]bool{}); got != want {
			t.Errorf("localResolved(%q) = %v, want %v", p, got, want)
		}
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	var live mountTable
	defer live.close()
	dir = t.TempDir()
	if _, ok := live.current(); !ok {
		t.Fatal("serve's mount table could not be read")
	}
	if err := unix.Mount("x", dir, "ramfs", 0, ""); err != nil {
		t.Skipf("mount: %v", err)
	}
	defer unix.Unmount(dir, unix.MNT_DETACH)
	// Seen within mountTableMaxAge (the kernel's change mark missed most mounts here).
	var mt2 mountPoints
	found := false
	for end := time.Now().Add(2 * time.Second); !found && time.Now().Before(end); time.Sleep(time.Millisecond) {
		var ok bool
		if mt2, ok = live.current(); !ok {
			t.Fatal("serve's mount table could not be read again")
		}
		for _, m := range mt2 {
			found = found || m.dir == dir
		}
	}
	if !found || !mt2.local(filepath.Join(dir, "f")) {
		t.Errorf("a mount made after the first read is not in the table read again within 2 s (%v)", found)
	}
}
