//go:build unix

package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/privgroup"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every directory up to / is checked, as ssh's StrictModes does, of the path as given and as
// it resolves: a world- or group-writable grandparent (not sticky), or one another user owns,
// lets that user rename the directory holding the file and put their own in its place (attack
// round atk32, F8). Sticky directories (/tmp) and the usual places binaries live pass.
func TestCheckFileSafeWalksEveryAncestor(t *testing.T) {
	root := t.TempDir()
	gp := filepath.Join(root, "gp")
	dir := filepath.Join(gp, "wbin")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "mcpsandbox")
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(pol, []byte("x"), 0o600)
	link := filepath.Join(root, "linked")
	if err := os.Symlink(dir, link); err != nil {
		t.Fatal(err)
	}
	ok := func(name string) {
		t.Helper()
		for _, p := range []string{bin, filepath.Join(link, "mcpsandbox")} {
			if err := policy.CheckBinarySafe(p); err != nil {
				t.Errorf("%s: %s refused: %v", name, p, err)
			}
		}
		if err := policy.CheckFileSafe(pol); err != nil {
			t.Errorf("%s: the policy file refused: %v", name, err)
		}
	}
	refused := func(name string, want ...string) {
		t.Helper()
		for _, c := range []struct {
			path  string
			check func(string) error
			also  string
		}{
			{bin, policy.CheckBinarySafe, "the directory " + gp + " above the binary"},
			{filepath.Join(link, "mcpsandbox"), policy.CheckBinarySafe, "the directory " + gp + " above the binary (" + filepath.Join(link, "mcpsandbox") + " resolves to " + bin + ")"},
			{pol, policy.CheckFileSafe, "the directory " + gp + " above the policy file"},
		} {
			err := c.check(c.path)
			if err == nil {
				t.Errorf("%s: %s accepted", name, c.path)
				continue
			}
			for _, w := range append([]string{c.also}, want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: %s: %v\nwant it to say %q", name, c.path, err, w)
				}
			}
		}
	}
	ok("0755 directories")
	os.Chmod(gp, 0o777)
	refused("a world-writable grandparent", "is writable by everyone: anyone could", "(fix: chmod o-w "+gp+")")
	os.Chmod(gp, 0o777|os.ModeSticky)
	ok("a sticky world-writable grandparent (as /tmp)")
	if os.Geteuid() == 0 {
		os.Chmod(gp, 0o775)
		os.Chown(gp, 0, 4321)
		refused("a group-writable grandparent", "is writable by group 4321: its members could", "(fix: chmod g-w "+gp+")")
		os.Chmod(gp, 0o755)
		os.Chown(gp, 4321, 4321)
		refused("a grandparent another user owns", "is owned by uid 4321, not by you (uid 0) or root", "(fix: chown 0 "+gp+")")
		os.Chown(gp, 0, 0)
	}
	os.Chmod(gp, 0o755)
	os.Chmod(root, 0o757)
	if err := policy.CheckBinarySafe(filepath.Join(link, "mcpsandbox")); err == nil || !strings.Contains(err.Error(), "the directory "+root+" above the binary") {
		t.Errorf("a world-writable directory above the link: %v", err)
	}
	os.Chmod(root, 0o755)

	// where binaries usually live: a system directory, a GOPATH or ~/bin under a home in /tmp
	for _, p := range []string{"/usr/bin/env", "/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			if err := policy.CheckBinarySafe(p); err != nil {
				t.Errorf("%s refused: %v", p, err)
			}
		}
	}
	home := t.TempDir()
	for _, d := range []string{filepath.Join(home, "go", "bin"), filepath.Join(home, "bin")} {
		os.MkdirAll(d, 0o755)
		os.WriteFile(filepath.Join(d, "mcpsandbox"), []byte("#!/bin/sh\n"), 0o755)
		if err := policy.CheckBinarySafe(filepath.Join(d, "mcpsandbox")); err != nil {
			t.Errorf("%s refused: %v", d, err)
		}
	}
}

// atk33 F3: a name that is a link to another link is resolved one link at a time, and the
// directories holding every link of the chain are checked too: given/l1 -> mid/l2 -> real, with
// mid world-writable, lets anyone re-point l2, so it is refused as mid/l2 itself is. A loop of
// links is refused, not followed forever. Catches the policy-own-link-chain mutant.
func TestCheckFileSafeWalksEveryLinkInAChain(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"given", "mid", "real"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, "real", "pol.toml"), []byte("x"), 0o600)
	mid := filepath.Join(root, "mid")
	l2 := filepath.Join(mid, "l2")
	if err := os.Symlink("../real", l2); err != nil {
		t.Fatal(err)
	}
	l1 := filepath.Join(root, "given", "l1")
	if err := os.Symlink(l2, l1); err != nil {
		t.Fatal(err)
	}
	pol := filepath.Join(l1, "pol.toml")
	if err := policy.CheckFileSafe(pol); err != nil {
		t.Fatalf("0755 directories along the chain: %v", err)
	}
	os.Chmod(mid, 0o777)
	want := "the directory " + mid + " holding the link " + l2 + " (" + pol + " resolves through it) is writable by everyone: anyone could allow themselves any command (fix: chmod o-w " + mid + ")"
	if err := policy.CheckFileSafe(pol); err == nil || err.Error() != want {
		t.Errorf("a world-writable directory holding the chain's second link: %v\nwant %q", err, want)
	}
	os.Chmod(mid, 0o777|os.ModeSticky)
	if err := policy.CheckFileSafe(pol); err != nil {
		t.Errorf("a sticky directory holding the second link: %v", err)
	}
	os.Chmod(mid, 0o755)

	loop := filepath.Join(root, "loop")
	os.Symlink(loop, loop)
	if err := policy.CheckFileSafe(filepath.Join(loop, "pol.toml")); err == nil || !strings.Contains(err.Error(), "more than 40 links") {
		t.Errorf("a loop of links: %v", err)
	}
}

// A policy file, and the directory holding it, group-writable by its owner's private group (the
// umask 002 of Debian and Ubuntu users) is the owner's alone, and accepted; the same with
// another member in the group, or a group of another name, is refused (trial33 F15).
func TestCheckFileSafePrivateGroup(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cfg")
	os.Mkdir(dir, 0o775)
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, []byte("x"), 0o664)
	os.Chmod(dir, 0o775)
	os.Chmod(pol, 0o664)
	for _, p := range []string{dir, pol} {
		if err := os.Chown(p, 1000, 1000); err != nil {
			t.Skipf("chown needs root: %v", err)
		}
	}
	defer policy.ActAsForTest(1000)()
	etc := t.TempDir()
	privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = filepath.Join(etc, "passwd"), filepath.Join(etc, "group"), filepath.Join(etc, "nsswitch.conf")
	defer func() {
		privgroup.PasswdFile, privgroup.GroupFile, privgroup.NSSwitchFile = "/etc/passwd", "/etc/group", "/etc/nsswitch.conf"
	}()
	os.WriteFile(privgroup.NSSwitchFile, []byte("passwd: files\ngroup: files\n"), 0o644)
	os.WriteFile(privgroup.PasswdFile, []byte("root:x:0:0::/root:/bin/sh\nann:x:1000:1000::/home/ann:/bin/sh\nbob:x:1001:1001::/home/bob:/bin/sh\n"), 0o644)
	for _, c := range []struct{ group, want string }{
		{"ann:x:1000:\n", ""},
		{"ann:x:1000:ann\n", ""},
		{"ann:x:1000:bob\n", "writable by group 1000"},
		{"devs:x:1000:\n", "writable by group 1000"},
	} {
		os.WriteFile(privgroup.GroupFile, []byte(c.group), 0o644)
		err := policy.CheckFileSafe(pol)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("group %q: refused: %v", c.group, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("group %q: err = %v, want %q", c.group, err, c.want)
		}
	}
}
