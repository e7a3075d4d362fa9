//go:build unix

package writable

import (
	"io/fs"
	"strconv"
	"syscall"

	"github.com/mcpsandbox/mcpsandbox/internal/privgroup"
)

// ByOthers says who other than the owner, root and me may write p, whose os.Lstat is st (nil:
// no one). A link's mode means nothing: nil. Group write, by the owning group or a named group of
// the ACL, is forgiven where the group is gid 0 or me's private group (privgroup.Of), as before
// ACLs were read. An ACL that cannot be read (but for a file system that has none) or does not
// decode is an error: who may write is then unknown. Sticky directories are the caller's to
// judge (whether others' write to one matters depends on what is asked).
func ByOthers(p string, st fs.FileInfo, me uint32) (*Writer, error) {
	sys, ok := st.Sys().(*syscall.Stat_t)
	if st.Mode()&fs.ModeSymlink != 0 || !ok {
		return nil, nil
	}
	var a *acl
	if !mutated("perm-acl-ignored") {
		var err error
		if a, err = readACL(p); err != nil {
			return nil, err
		}
	}
	groupOK := func(gid uint32) bool { return gid == 0 || privgroup.Of(gid, me) }
	mode := st.Mode().Perm()
	switch {
	case mode&0o002 != 0:
		return &Writer{Kind: Everyone, Fix: "chmod o-w " + p}, nil
	case a != nil:
		return a.writer(p, sys.Uid, sys.Gid, me, groupOK), nil
	case mode&0o020 != 0 && !groupOK(sys.Gid):
		return &Writer{Kind: Group, ID: sys.Gid, Fix: "chmod g-w " + p}, nil
	}
	return nil, nil
}

// The tags of a POSIX ACL entry (linux/posix_acl.h).
const (
	tagUserObj  = 0x01
	tagUser     = 0x02
	tagGroupObj = 0x04
	tagGroup    = 0x08
	tagMask     = 0x10
	tagOther    = 0x20
)

type aclEntry struct {
	tag, perm uint16
	id        uint32
}

// acl is a file's access ACL; mask is its MASK entry's permission (7 without one).
type acl struct {
	entries []aclEntry
	mask    uint16
}

// writer is the first entry that lets someone other than owner, root and me write, as the
// kernel grants it: a named user's, the owning group's and a named group's permission only as
// far as the mask lets it; other's as it is.
func (a *acl) writer(p string, owner, gid, me uint32, groupOK func(uint32) bool) *Writer {
	for _, e := range a.entries {
		eff := e.perm & a.mask
		switch {
		case e.tag == tagOther && e.perm&2 != 0:
			return &Writer{Kind: Everyone, Entry: "other::" + permString(e.perm), Fix: "chmod o-w " + p}
		case e.tag == tagUser && eff&2 != 0 && e.id != owner && e.id != 0 && e.id != me:
			return &Writer{Kind: User, ID: e.id, Entry: entryName("user", e), Fix: aclFix("u", e.id, p)}
		case e.tag == tagGroupObj && eff&2 != 0 && !groupOK(gid):
			return &Writer{Kind: Group, ID: gid, Fix: "chmod g-w " + p}
		case e.tag == tagGroup && eff&2 != 0 && !groupOK(e.id):
			return &Writer{Kind: Group, ID: e.id, Entry: entryName("group", e), Fix: aclFix("g", e.id, p)}
		}
	}
	return nil
}

// entryName is a named entry as getfacl writes it: "user:1003:rw-".
func entryName(tag string, e aclEntry) string {
	return tag + ":" + strconv.FormatUint(uint64(e.id), 10) + ":" + permString(e.perm)
}

// aclFix is the fix for a named entry: remove it, or the whole ACL.
func aclFix(tag string, id uint32, p string) string {
	return "setfacl -x " + tag + ":" + strconv.FormatUint(uint64(id), 10) + " " + p + ", or setfacl -b " + p + " to remove the whole ACL"
}

// permString is an ACL permission as getfacl writes it: "rw-".
func permString(perm uint16) string {
	b := []byte("---")
	for i, c := range "rwx" {
		if perm&(4>>i) != 0 {
			b[i] = byte(c)
		}
	}
	return string(b)
}
