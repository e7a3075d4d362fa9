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

// owner is a file's uid and gid to keep, and its POSIX access ACL; set is false when there is
// nothing to keep.
type owner struct {
	uid, gid int
	set      bool
	// acl is the file's system.posix_acl_access, kept with it (atk35 F3): with an ACL the mode's
	// group bits are its mask, so the mode alone gave the owning group what only a named user had
	acl []byte
}

const aclXattr = "system.posix_acl_access"

// ownerOfFile is ownerOf with the ACL of the file at path.
func ownerOfFile(path string, fi fs.FileInfo) owner {
	o := ownerOf(fi)
	if o.set && !mutated("init-acl-dropped") {
		o.acl = accessACL(path)
	}
	return o
}

// accessACL is path's access ACL, or nil where it has none (or the file system keeps none).
func accessACL(path string) []byte {
	for size := 128; size <= 1<<16; size *= 4 {
		b := make([]byte, size)
		n, err := unix.Getxattr(path, aclXattr, b)
		if errors.Is(err, unix.ERANGE) {
			continue
		}
		if err != nil || n <= 0 {
			return nil
		}
		return b[:n]
	}
	return nil
}

// aclGroupObj is the permission an access ACL gives the owning group (its GROUP_OBJ entry).
func aclGroupObj(acl []byte) (fs.FileMode, bool) {
	if len(acl) < 4 || (len(acl)-4)%8 != 0 {
		return 0, false
	}
	for e := acl[4:]; len(e) >= 8; e = e[8:] {
		if tag := uint16(e[0]) | uint16(e[1])<<8; tag == 0x04 {
			return fs.FileMode(uint16(e[2])|uint16(e[3])<<8) & 0o7, true
		}
	}
	return 0, false
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

// apply gives f the owner and group, when they differ from what f got by being created, and the
// old file's ACL. Only root may give a file away; anyone else keeps what the kernel allows (their
// own group).
func (o owner) apply(f *os.File) (string, error) {
	if !o.set {
		return "", nil
	}
	fi, err := f.Stat()
	if err != nil {
		return "", err
	}
	kept := ""
	if cur := ownerOf(fi); cur.uid != o.uid || cur.gid != o.gid {
		if err := f.Chown(o.uid, o.gid); err == nil {
			kept = fmt.Sprintf("%d:%d", o.uid, o.gid)
		} else if os.Geteuid() == 0 || !errors.Is(err, fs.ErrPermission) {
			return "", fmt.Errorf("give %s to %d:%d as before: %w", f.Name(), o.uid, o.gid, err)
		}
	}
	if len(o.acl) == 0 && !mutated("init-acl-inherited") {
		// a file that had none gets none: one inherited from the directory's default ACL
		// would give its named users what the old file did not (atk35b F2)
		if err := unix.Fremovexattr(int(f.Fd()), aclXattr); err != nil && !errors.Is(err, unix.ENODATA) && !errors.Is(err, unix.ENOTSUP) {
			return "", fmt.Errorf("remove the ACL %s inherited from its directory: %w", f.Name(), err)
		}
	}
	if len(o.acl) > 0 {
		if err := unix.Fsetxattr(int(f.Fd()), aclXattr, o.acl, 0); err != nil {
			// not kept (a backup on a file system without ACLs): the owning group gets what its
			// own entry gave it, not the mask, and the named entries nothing
			g, _ := aclGroupObj(o.acl)
			if err := f.Chmod(fi.Mode().Perm()&^0o070 | g<<3); err != nil {
				return "", err
			}
		}
	}
	return kept, nil
}

// writable is nil when this process may write path, else why not (EROFS: a read-only mount;
// EPERM: an immutable or append-only file; EACCES: its owner and mode).
func writable(path string) error { return unix.Access(path, unix.W_OK) }

// syncDir makes a rename in dir durable.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
