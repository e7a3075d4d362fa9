package writable

import (
	"encoding/binary"
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

const aclXattr = "system.posix_acl_access"

// readACL reads p's access ACL (nil: none, or a file system without ACLs), not following a link.
func readACL(p string) (*acl, error) {
	buf := make([]byte, 4+8*16)
	for range 4 {
		n, err := unix.Lgetxattr(p, aclXattr, buf)
		if errors.Is(err, unix.ERANGE) {
			if n, err = unix.Lgetxattr(p, aclXattr, nil); err == nil {
				buf = make([]byte, n)
				continue
			}
		}
		switch {
		case errors.Is(err, unix.ENODATA) || errors.Is(err, unix.ENOTSUP):
			return nil, nil
		case err != nil:
			return nil, fmt.Errorf("its POSIX ACL (xattr %s) cannot be read, so who may write it is unknown: %w", aclXattr, err)
		}
		a, err := decodeACL(buf[:n])
		if err != nil {
			return nil, fmt.Errorf("its POSIX ACL (xattr %s) does not decode (%v), so who may write it is unknown (fix: setfacl -b %s, to remove it)", aclXattr, err, p)
		}
		return a, nil
	}
	return nil, fmt.Errorf("its POSIX ACL (xattr %s) kept changing size while read, so who may write it is unknown", aclXattr)
}

// decodeACL reads the kernel's format: a little-endian u32 version 2, then 8-byte entries {u16
// tag, u16 perm, u32 id}. It takes only what the kernel itself would set (posix_acl_valid): one
// owner, owning-group and other entry, a mask where there are named entries, no unknown tag or
// permission bit.
func decodeACL(b []byte) (*acl, error) {
	if len(b) < 4 || (len(b)-4)%8 != 0 {
		return nil, fmt.Errorf("%d bytes, not a header and 8-byte entries", len(b))
	}
	if v := binary.LittleEndian.Uint32(b); v != 2 {
		return nil, fmt.Errorf("version %d, not 2", v)
	}
	a := &acl{mask: 7}
	seen := map[uint16]int{}
	for i := 4; i < len(b); i += 8 {
		e := aclEntry{binary.LittleEndian.Uint16(b[i:]), binary.LittleEndian.Uint16(b[i+2:]), binary.LittleEndian.Uint32(b[i+4:])}
		switch {
		case e.tag != tagUserObj && e.tag != tagUser && e.tag != tagGroupObj && e.tag != tagGroup && e.tag != tagMask && e.tag != tagOther:
			return nil, fmt.Errorf("entry %d: unknown tag %#x", len(a.entries), e.tag)
		case e.perm&^7 != 0:
			return nil, fmt.Errorf("entry %d: permission %#x", len(a.entries), e.perm)
		case e.tag == tagMask:
			a.mask = e.perm
		}
		seen[e.tag]++
		a.entries = append(a.entries, e)
	}
	named := seen[tagUser]+seen[tagGroup] > 0
	if seen[tagUserObj] != 1 || seen[tagGroupObj] != 1 || seen[tagOther] != 1 || seen[tagMask] > 1 || (named && seen[tagMask] != 1) {
		return nil, fmt.Errorf("not one owner, owning group and other entry, and a mask for its named entries")
	}
	return a, nil
}
