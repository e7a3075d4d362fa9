//go:build unix

package generate

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// owner is a file's uid and gid to keep; set is false when there is nothing to keep.
type owner struct {
	uid, gid int
	set      bool
}

// links is how many names the file has (hard links).
func links(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}

func ownerOf(fi fs.FileInfo) owner {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return owner{uid: int(st.Uid), gid: int(st.Gid), set: true}
	}
	return owner{}
}

// newFileOwner: a new file written by root into someone else's directory (sudo, or a root
// shell configuring a user's client) belongs to that directory's owner, so the user's client can
// read it. Anyone else creates files as themselves.
func newFileOwner(dir fs.FileInfo) owner {
	if os.Geteuid() != 0 {
		return owner{}
	}
	return ownerOf(dir)
}

// apply gives f the owner and group, when they differ from what f got by being created. Only
// root may give a file away; anyone else keeps what the kernel allows (their own group).
func (o owner) apply(f *os.File) (string, error) {
	if !o.set {
		return "", nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	if cur := ownerOf(fi); cur == o {
		return "", nil
	}
	if err := f.Chown(o.uid, o.gid); err != nil {
		if os.Geteuid() != 0 && errors.Is(err, fs.ErrPermission) {
			return "", nil
		}
		return "", fmt.Errorf("give %s to %d:%d as before: %w", f.Name(), o.uid, o.gid, err)
	}
	return fmt.Sprintf("%d:%d", o.uid, o.gid), nil
}

func writable(path string) bool { return unix.Access(path, unix.W_OK) == nil }

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
