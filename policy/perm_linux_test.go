package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/privgroup"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A POSIX ACL shows in the mode only as its mask, in the group bits: `setfacl -m u:eve:rw` on
// ann's 0644 policy makes it 0664, which the rule forgave for ann's private group (and for gid 0),
// and eve rewrote the policy serve ran (atk35 F2). Who may write is read from the ACL: a named
// user or a shared named group with write past the mask is refused, on the policy file, the
// token file, a binary and every directory above them; the owner's own entries, a read-only
// entry and a mask without write are not. Catches the perm-acl-ignored mutant.
func TestCheckFileSafeACL(t *testing.T) {
	root := t.TempDir()
	top := filepath.Join(root, "top")
	cfg := filepath.Join(top, "cfg")
	os.MkdirAll(cfg, 0o755)
	pol, tok, bin := filepath.Join(cfg, "policy.toml"), filepath.Join(cfg, "token"), filepath.Join(cfg, "mcpsandbox")
	os.WriteFile(pol, []byte("x"), 0o644)
	os.WriteFile(tok, []byte("x"), 0o600)
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	mode := map[string]os.FileMode{top: 0o755, cfg: 0o755, pol: 0o644, tok: 0o600, bin: 0o755}
	for p := range mode {
		if err := os.Chown(p, 1000, 1000); err != nil {
			testenv.Skip(t, "chown needs root: %v", err)
		}
	}
	defer policy.ActAsForTest(1000)()
	etc := t.TempDir()
	privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = filepath.Join(etc, "passwd"), filepath.Join(etc, "group"), filepath.Join(etc, "nsswitch.conf")
	defer func() {
		privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = "/etc/passwd", "/etc/group", "/etc/nsswitch.conf"
	}()
	os.WriteFile(privgroup.NSSwitchFile, []byte("passwd: files\ngroup: files\n"), 0o644)
	os.WriteFile(privgroup.PasswdFile, []byte("root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\neve:x:1003:1003::/home/eve:/bin/sh\n"), 0o644)
	os.WriteFile(privgroup.GroupFile, []byte("root:x:0:\nann:x:1000:\neve:x:1003:\nshare:x:1004:ann,eve\n"), 0o644)

	checks := []struct {
		name  string
		path  string
		check func(string) error
	}{{"the policy file", pol, policy.CheckFileSafe}, {"the token file", tok, policy.CheckTokenFileSafe}, {"the binary", bin, policy.CheckBinarySafe}}
	dropACL := func(p string) {
		unix.Removexattr(p, "system.posix_acl_access")
		os.Chmod(p, mode[p])
	}
	for _, c := range checks {
		if err := c.check(c.path); err != nil {
			t.Fatalf("%s without an ACL: %v", c.name, err)
		}
	}
	for _, c := range []struct {
		name, on string
		acl      []string
		want     string // "": accepted
	}{
		{"a named user with write", "", []string{"u:1003:rw-"}, "is writable by uid 1003 through its ACL entry user:1003:rw- (the mode's group bits show only the ACL mask): that user could "},
		{"a shared named group with write", "", []string{"g:1004:rw-"}, "is writable by group 1004 through its ACL entry group:1004:rw- (the mode's group bits show only the ACL mask): its members could "},
		{"the directory holding it", cfg, []string{"u:1003:rwx"}, "the directory " + cfg + " holding "},
		{"a directory above it", top, []string{"u:1003:rwx"}, "the directory " + top + " above "},
		{"a named user, read only", "", []string{"u:1003:r--"}, ""},
		{"a named user with write, the mask without", "", []string{"u:1003:rw-", "m::r--"}, ""},
		{"the owner named", "", []string{"u:1000:rwx"}, ""},
		{"the owner's private group named", "", []string{"g:1000:rw-"}, ""},
		{"a named user with write on a directory, the mask without", cfg, []string{"u:1003:rwx", "m::r-x"}, ""},
	} {
		for _, k := range checks {
			on := c.on
			if on == "" {
				on = k.path
			}
			testenv.SetACL(t, on, c.acl...)
			err := k.check(k.path)
			dropACL(on)
			switch {
			case c.want == "" && err != nil:
				t.Errorf("%s, on %s: refused: %v", k.name, c.name, err)
			case c.want == "":
			case err == nil:
				t.Errorf("%s, %s: accepted", k.name, c.name)
			case !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "(fix: setfacl -x ") || !strings.Contains(err.Error(), "setfacl -b "+on):
				t.Errorf("%s, %s: %v\nwant it to say %q and the setfacl that removes it", k.name, c.name, err, c.want)
			}
		}
	}

	// root:root with an ACL: gid 0's group write is forgiven, a named user's is not
	os.Chown(pol, 0, 0)
	testenv.SetACL(t, pol, "u:1003:rw-")
	if err := policy.CheckFileSafe(pol); err == nil || !strings.Contains(err.Error(), "writable by uid 1003 through its ACL entry") {
		t.Errorf("a root:root policy with a named user's write: %v", err)
	}
}
