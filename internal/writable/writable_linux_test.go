package writable

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/privgroup"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, "internal/writable") }

// groups makes privgroup read its own files: gid 1000 is ann's (uid 1000) private group, 1004 a
// shared one.
func groups(t *testing.T) {
	etc := t.TempDir()
	privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = filepath.Join(etc, "passwd"), filepath.Join(etc, "group"), filepath.Join(etc, "nsswitch.conf")
	t.Cleanup(func() {
		privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = "/etc/passwd", "/etc/group", "/etc/nsswitch.conf"
	})
	os.WriteFile(privgroup.NSSwitchFile, []byte("passwd: files\ngroup: files\n"), 0o644)
	os.WriteFile(privgroup.PasswdFile, []byte("root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\neve:x:1003:1003::/home/eve:/bin/sh\n"), 0o644)
	os.WriteFile(privgroup.GroupFile, []byte("root:x:0:\nann:x:1000:\neve:x:1003:\nshare:x:1004:ann,eve\n"), 0o644)
}

// With an access ACL the mode's group bits are the mask: who may write is read from the ACL's
// entries, as the kernel grants them (atk35 F2). A named user other than the owner, root and
// serve's user with write past the mask writes the file; a named group is judged as the owning
// group is. Catches the perm-acl-ignored mutant.
func TestByOthersReadsTheACL(t *testing.T) {
	groups(t)
	dir := t.TempDir()
	const me = 1000
	for i, c := range []struct {
		name string
		mode os.FileMode
		gid  int
		acl  []string
		want string // "" : no one
	}{
		{"no ACL, 0644", 0o644, 0, nil, ""},
		{"no ACL, 0664, gid 0", 0o664, 0, nil, ""},
		{"no ACL, 0664, a shared group", 0o664, 1004, nil, "writable by group 1004"},
		{"no ACL, 0646", 0o646, 0, nil, "writable by everyone"},
		{"a named user with write", 0o644, 0, []string{"u:1003:rw-"}, "writable by uid 1003 through its ACL entry user:1003:rw- (the mode's group bits show only the ACL mask)"},
		{"a named user with write, the owner's private group", 0o644, 1000, []string{"u:1003:rw-"}, "writable by uid 1003 through its ACL entry user:1003:rw-"},
		{"a named user, read only", 0o644, 1000, []string{"u:1003:r--"}, ""},
		{"a named user with write, the mask without", 0o644, 1000, []string{"u:1003:rw-", "m::r--"}, ""},
		{"the owner named", 0o644, 1000, []string{"u:1000:rw-"}, ""},
		{"root named", 0o644, 1000, []string{"u:0:rwx"}, ""},
		{"serve's user named", 0o644, 0, []string{"u:1000:rw-"}, ""},
		{"a named shared group with write", 0o644, 1000, []string{"g:1004:rw-"}, "writable by group 1004 through its ACL entry group:1004:rw-"},
		{"the owner's private group named", 0o644, 0, []string{"g:1000:rw-"}, ""},
		{"gid 0 named", 0o644, 1000, []string{"g:0:rw-"}, ""},
		{"a shared owning group, its entry with write", 0o644, 1004, []string{"g::rw-", "u:1000:r--"}, "writable by group 1004"},
		{"a shared owning group, its entry read only (the mask shows write)", 0o644, 1004, []string{"g::r--", "u:1000:rw-"}, ""},
		{"a shared owning group with write, the mask without", 0o644, 1004, []string{"g::rw-", "u:1000:r--", "m::r--"}, ""},
	} {
		p := filepath.Join(dir, strings.Repeat("f", i+1))
		os.WriteFile(p, nil, c.mode)
		os.Chmod(p, c.mode)
		if err := os.Chown(p, me, c.gid); err != nil {
			testenv.Skip(t, "chown needs root: %v", err)
		}
		if c.acl != nil {
			testenv.SetACL(t, p, c.acl...)
		}
		st, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		w, err := ByOthers(p, st, me)
		switch {
		case err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && w != nil:
			t.Errorf("%s (mode %v): %s (fix: %s), want no one", c.name, st.Mode(), w.Who(), w.Fix)
		case c.want != "" && w == nil:
			t.Errorf("%s (mode %v): no one, want %q", c.name, st.Mode(), c.want)
		case c.want != "" && !strings.HasPrefix(w.Who(), c.want):
			t.Errorf("%s: %s, want %q", c.name, w.Who(), c.want)
		case w != nil && w.Entry != "" && !strings.Contains(w.Fix, "setfacl -x ") || w != nil && w.Entry != "" && !strings.Contains(w.Fix, "setfacl -b "+p):
			t.Errorf("%s: fix %q names no setfacl", c.name, w.Fix)
		}
	}
	// a link's mode and ACL mean nothing
	l := filepath.Join(dir, "link")
	os.Symlink("f", l)
	if st, _ := os.Lstat(l); st != nil {
		if w, err := ByOthers(l, st, me); w != nil || err != nil {
			t.Errorf("a link: %v, %v", w, err)
		}
	}
}

// An ACL the kernel would not have set, or of a format not known here, is refused: who may write
// is then unknown.
func TestDecodeACL(t *testing.T) {
	ent := func(b []byte, tag, perm uint16, id uint32) []byte {
		b = binary.LittleEndian.AppendUint16(b, tag)
		b = binary.LittleEndian.AppendUint16(b, perm)
		return binary.LittleEndian.AppendUint32(b, id)
	}
	v2 := binary.LittleEndian.AppendUint32(nil, 2)
	minimal := ent(ent(ent(v2, tagUserObj, 6, 0), tagGroupObj, 4, 0), tagOther, 4, 0)
	full := ent(ent(minimal, tagUser, 6, 1003), tagMask, 6, 0)
	if a, err := decodeACL(full); err != nil || len(a.entries) != 5 || a.mask != 6 {
		t.Fatalf("a valid ACL: %+v, %v", a, err)
	}
	for name, b := range map[string][]byte{
		"empty":                      nil,
		"version 1":                  binary.LittleEndian.AppendUint32(nil, 1),
		"a torn entry":               full[:len(full)-3],
		"an unknown tag":             ent(minimal, 0x40, 0, 0),
		"a permission bit past rwx":  ent(minimal, tagUser, 8|6, 1003),
		"a named entry without mask": ent(minimal, tagUser, 6, 1003),
		"no other entry":             ent(ent(v2, tagUserObj, 6, 0), tagGroupObj, 4, 0),
		"two masks":                  ent(full, tagMask, 7, 0),
	} {
		if a, err := decodeACL(b); err == nil {
			t.Errorf("%s: decoded %+v", name, a)
		}
	}
}
