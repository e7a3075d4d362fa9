package testenv

import (
	"os"
	"syscall"
	"testing"
)

// Mount mounts source (of type fstype, with flags and data, as mount(2) takes them) on a fresh
// directory and returns it, detached when t ends. It needs root: skipped otherwise, or when the
// mount fails.
func Mount(t testing.TB, source, fstype string, flags uintptr, data string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a mount needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount(source, dir, fstype, flags, data); err != nil {
		t.Skipf("mount %s on %s: %v", source, dir, err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// BindMount binds dir on a fresh directory and returns it: the same directory by device and
// inode under another name that no link explains (root only, as Mount).
func BindMount(t testing.TB, dir string) string {
	t.Helper()
	return Mount(t, dir, "", syscall.MS_BIND, "")
}
