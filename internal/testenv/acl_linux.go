package testenv

import (
	"encoding/binary"
	"errors"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// SetACL gives path an access ACL as `setfacl -m` would (setfacl need not be installed): each
// entry is written as setfacl takes it, "u:1003:rw-", "g:1004:r--", "g::rw-" (the owning group),
// "m::r--" (the mask). The owner's, owning group's and other's entries come from the mode unless
// given; the mask, unless given, is the union of the named entries and the owning group, as
// setfacl computes it. The kernel then shows the mask as the mode's group bits. A file system
// without ACLs skips the test, loudly.
func SetACL(t testing.TB, path string, entries ...string) {
	t.Helper()
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	m := uint16(st.Mode().Perm())
	const none = 0xffffffff
	type ent struct {
		tag, perm uint16
		id        uint32
	}
	base := map[uint16]*ent{0x01: {0x01, m >> 6 & 7, none}, 0x04: {0x04, m >> 3 & 7, none}, 0x20: {0x20, m & 7, none}}
	var named []ent
	var mask *uint16
	for _, s := range entries {
		f := strings.Split(s, ":")
		if len(f) != 3 || len(f[2]) != 3 {
			t.Fatalf("SetACL: entry %q is not TAG:ID:rwx", s)
		}
		var perm uint16
		for i, c := range "rwx" {
			if f[2][i] == byte(c) {
				perm |= 4 >> i
			}
		}
		tag := map[string]uint16{"u": 0x01, "g": 0x04, "m": 0x10, "o": 0x20}[f[0]]
		switch {
		case tag == 0x10:
			mask = &perm
		case tag == 0 || (f[1] != "" && tag == 0x20):
			t.Fatalf("SetACL: entry %q: tag u, g, m or o", s)
		case f[1] == "":
			base[tag].perm = perm
		default:
			id, err := strconv.ParseUint(f[1], 10, 32)
			if err != nil {
				t.Fatalf("SetACL: entry %q: %v", s, err)
			}
			named = append(named, ent{tag << 1, perm, uint32(id)}) // USER 0x02, GROUP 0x08
		}
	}
	all := append(named, *base[0x01], *base[0x04], *base[0x20])
	if mask == nil {
		u := base[0x04].perm
		for _, e := range named {
			u |= e.perm
		}
		mask = &u
	}
	all = append(all, ent{0x10, *mask, none})
	// the kernel wants entries by tag, then id
	sort.Slice(all, func(i, j int) bool {
		return all[i].tag < all[j].tag || all[i].tag == all[j].tag && all[i].id < all[j].id
	})
	b := binary.LittleEndian.AppendUint32(nil, 2)
	for _, e := range all {
		b = binary.LittleEndian.AppendUint16(b, e.tag)
		b = binary.LittleEndian.AppendUint16(b, e.perm)
		b = binary.LittleEndian.AppendUint32(b, e.id)
	}
	if err := unix.Setxattr(path, "system.posix_acl_access", b, 0); errors.Is(err, unix.ENOTSUP) {
		Skip(t, "the file system of %s does not support POSIX ACLs: %v", path, err)
	} else if err != nil {
		t.Fatalf("SetACL %s %q: %v", path, entries, err)
	}
}
