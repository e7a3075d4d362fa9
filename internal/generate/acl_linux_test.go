package generate

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// aclBytes is a POSIX access ACL as setfacl writes it: owner rw, uid 4242 r, owning group
// nothing, mask r, others nothing (the mode then reads 0640).
func aclBytes() []byte {
	var b bytes.Buffer
	binary.Write(&b, binary.LittleEndian, uint32(2))
	for _, e := range []struct {
		tag, perm uint16
		id        uint32
	}{{0x01, 6, 0xffffffff}, {0x02, 4, 4242}, {0x04, 0, 0xffffffff}, {0x10, 4, 0xffffffff}, {0x20, 0, 0xffffffff}} {
		binary.Write(&b, binary.LittleEndian, e)
	}
	return b.Bytes()
}

// init keeps a config's ACL with it (atk35 F3): a config shared read-only with one named user
// (0600 + u:4242:r, shown 0640) was rewritten, and backed up, as a plain 0640, so every member
// of its group could read it, env secrets and all. The rewritten file and its backup carry the
// ACL; the mode's group bits are its mask again, not the group's permission. Control: a file
// without an ACL gets none.
func TestRewriteKeepsTheACL(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.json")
	os.WriteFile(path, []byte(`{"mcpServers": {}}`), 0o600)
	if err := unix.Setxattr(path, aclXattr, aclBytes(), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			t.Skipf("the test's file system keeps no POSIX ACLs: %v", err)
		}
		t.Fatal(err)
	}
	res, err := WriteFileBackedUp(path, []byte(`{"mcpServers": {"a": {}}}`), 0o600, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, res.Backup} {
		if got := accessACL(f); !bytes.Equal(got, aclBytes()) {
			t.Errorf("%s: ACL %x after init's write, want the old file's %x", f, got, aclBytes())
		}
	}
	other := filepath.Join(dir, "plain.json")
	os.WriteFile(other, []byte(`{}`), 0o600)
	if _, err := WriteFileBackedUp(other, []byte(`{"a": 1}`), 0o600, ""); err != nil {
		t.Fatal(err)
	}
	if got := accessACL(other); got != nil {
		t.Errorf("control: a file without an ACL got one: %x", got)
	}
	if !strings.HasPrefix(filepath.Base(res.Backup), "config.json.bak-") {
		t.Errorf("backup %s", res.Backup)
	}
}

// Where the ACL cannot be set (a file system without them), the owning group gets what its own
// entry gave it, not the mask.
func TestACLGroupObj(t *testing.T) {
	if g, ok := aclGroupObj(aclBytes()); !ok || g != 0 {
		t.Errorf("group entry %o %v, want 0", g, ok)
	}
	if _, ok := aclGroupObj([]byte{2, 0, 0, 0, 1}); ok {
		t.Error("a torn ACL read as one")
	}
}

// A config that had no ACL gets none from its directory's default ACL when init rewrites it
// (atk35b F2: the new file inherited u:4242:r, which the old one did not give). Its backup
// neither.
func TestRewriteInheritsNoACL(t *testing.T) {
	dir := t.TempDir()
	if err := unix.Setxattr(dir, "system.posix_acl_default", aclBytes(), 0); err != nil {
		if errors.Is(err, unix.ENOTSUP) {
			t.Skipf("the test's file system keeps no POSIX ACLs: %v", err)
		}
		t.Fatal(err)
	}
	path := filepath.Join(dir, "config.json")
	os.WriteFile(path, []byte(`{}`), 0o600)
	unix.Removexattr(path, aclXattr) // made before the rewrite with none, as by a tool that sets none
	if got := accessACL(path); got != nil {
		t.Fatalf("set-up: %x", got)
	}
	res, err := WriteFileBackedUp(path, []byte(`{"a": 1}`), 0o600, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path, res.Backup} {
		if got := accessACL(f); got != nil {
			t.Errorf("%s: inherited the directory's default ACL %x", f, got)
		}
	}
}
