package privgroup

import (
	"os"
	"path/filepath"
	"testing"
)

func files(t *testing.T, passwd, group string) {
	t.Helper()
	dir := t.TempDir()
	GroupFile, PasswdFile, NSSwitchFile = filepath.Join(dir, "group"), filepath.Join(dir, "passwd"), filepath.Join(dir, "nsswitch.conf")
	dirs, services := UserdbDirs, UserdbServices
	UserdbDirs, UserdbServices = []string{filepath.Join(dir, "etc-userdb"), filepath.Join(dir, "run-userdb")}, filepath.Join(dir, "services")
	t.Cleanup(func() {
		GroupFile, PasswdFile, NSSwitchFile = "/etc/group", "/etc/passwd", "/etc/nsswitch.conf"
		UserdbDirs, UserdbServices = dirs, services
	})
	os.WriteFile(NSSwitchFile, []byte("passwd: files systemd\ngroup: files systemd # local\nhosts: files dns\n"), 0o644)
	os.WriteFile(GroupFile, []byte(group), 0o644)
	os.WriteFile(PasswdFile, []byte(passwd), 0o644)
}

const passwd = "root:x:0:0:root:/root:/bin/bash\nann:x:1000:1000::/home/ann:/bin/bash\nbob:x:1001:1001::/home/bob:/bin/bash\n"

// A user's own group is private only when no one else is in it, by membership or as their
// primary group, and it is named after the user (Debian's user-group-modes rule).
func TestPrivateGroup(t *testing.T) {
	for _, c := range []struct {
		name, passwd, group string
		gid, uid            uint32
		want                bool
	}{
		{"own group, no members", passwd, "root:x:0:\nann:x:1000:\nbob:x:1001:\n", 1000, 1000, true},
		{"own group, listing only its user", passwd, "ann:x:1000:ann\n", 1000, 1000, true},
		{"another member", passwd, "ann:x:1000:bob\n", 1000, 1000, false},
		{"another member after the user", passwd, "ann:x:1000:ann,bob\n", 1000, 1000, false},
		{"another user's primary group", passwd + "eve:x:1002:1000::/home/eve:/bin/sh\n", "ann:x:1000:\n", 1000, 1000, false},
		{"another user's group", passwd, "bob:x:1001:\n", 1001, 1000, false},
		{"a shared group of another name", passwd, "staff:x:1000:\n", 1000, 1000, false},
		{"gid 0", passwd, "root:x:0:\n", 0, 0, false},
		{"not in the file", passwd, "bob:x:1001:\n", 1000, 1000, false},
		{"listed twice", passwd, "ann:x:1000:\nann:x:1000:bob\n", 1000, 1000, false},
		{"NIS compat entries", passwd, "ann:x:1000:\n+:::\n", 1000, 1000, false},
		// glibc reads these as gid 1002 of another group (atk34b F1): the file is not judged
		{"a gid written +1000", passwd, "ann:x:1000:\nx:x:+1000:bob\n", 1000, 1000, false},
		{"a gid written with a blank", passwd, "ann:x:1000:\nx:x: 1000:bob\n", 1000, 1000, false},
		{"a primary gid written +1000", passwd + "eve:x:1002:+1000::/home/eve:/bin/sh\n", "ann:x:1000:\n", 1000, 1000, false},
		{"an entry after leading blanks", passwd, "ann:x:1000:\n  x:x:1000:bob\n", 1000, 1000, false},
		{"a comment and a blank line", passwd, "# groups\n\n   \nann:x:1000:\n", 1000, 1000, true},
		{"user unknown", passwd, "ann:x:1000:\n", 1000, 1005, false},
	} {
		files(t, c.passwd, c.group)
		if got := Of(c.gid, c.uid); got != c.want {
			t.Errorf("%s: Of(%d, %d) = %v, want %v", c.name, c.gid, c.uid, got, c.want)
		}
	}
	// a directory service may add members the files do not list: no group is private then
	files(t, passwd, "ann:x:1000:\n")
	for _, nss := range []string{"passwd: files\ngroup: files sss\n", "passwd: files ldap\ngroup: files\n", "group: compat winbind\n",
		"group: files [SUCCESS=continue]sss\n", "initgroups: files sss\n"} {
		os.WriteFile(NSSwitchFile, []byte(nss), 0o644)
		if Of(1000, 1000) {
			t.Errorf("nsswitch.conf %q: judged private", nss)
		}
	}
	os.WriteFile(NSSwitchFile, []byte("group: files [NOTFOUND=return] systemd\n"), 0o644)
	if !Of(1000, 1000) {
		t.Errorf("files [NOTFOUND=return] systemd: not judged private")
	}
	os.Remove(NSSwitchFile) // glibc's default: files
	if !Of(1000, 1000) {
		t.Errorf("no nsswitch.conf: not judged private")
	}
	GroupFile = "/nonexistent/group"
	if Of(1000, 1000) {
		t.Errorf("an unreadable group file judged a group private")
	}
}

// nss-systemd serves systemd's userdb records beside the files: a membership drop-in, a user
// record whose primary group is the owner's, or a service such as systemd-homed's may put another
// user in a group /etc/group lists empty (atk35 F1). systemd counts as local only where the
// drop-in directories are empty or absent and no service but its dynamic users' (and the
// multiplexer, and the NSS bridge) listens. Catches the private-group-userdb mutant.
func TestPrivateGroupUserdb(t *testing.T) {
	files(t, passwd, "ann:x:1000:\n")
	if !Of(1000, 1000) {
		t.Fatal("files systemd, no userdb record: not judged private")
	}
	etc, run := UserdbDirs[0], UserdbDirs[1]
	os.Mkdir(etc, 0o755)
	os.Mkdir(UserdbServices, 0o755)
	for _, s := range []string{"io.systemd.DynamicUser", "io.systemd.Multiplexer", "io.systemd.NameServiceSwitch"} {
		os.WriteFile(filepath.Join(UserdbServices, s), nil, 0o644)
	}
	if !Of(1000, 1000) {
		t.Fatal("empty drop-in directories and systemd's own services only: not judged private")
	}
	// systemd-userdbd links services of its own to the multiplexer (atk35b F3); a link elsewhere
	// is a service of its own
	os.Symlink("io.systemd.Multiplexer", filepath.Join(UserdbServices, "io.systemd.DropIn"))
	if !Of(1000, 1000) {
		t.Error("io.systemd.DropIn, a link to the multiplexer: not judged private")
	}
	os.Symlink("/run/elsewhere/io.example.Users", filepath.Join(UserdbServices, "io.example.Linked"))
	if Of(1000, 1000) {
		t.Error("a service linked elsewhere than the multiplexer: judged private")
	}
	os.Remove(filepath.Join(UserdbServices, "io.example.Linked"))
	for _, c := range []struct{ name, path string }{
		{"a membership drop-in", filepath.Join(run, "bob:ann.membership")},
		{"a user record (its primary group may be the owner's)", filepath.Join(etc, "zed.user")},
		{"a group record", filepath.Join(etc, "ann.group")},
		{"a file of a name systemd may read some day", filepath.Join(etc, "README")},
		{"systemd-homed's service", filepath.Join(UserdbServices, "io.systemd.Home")},
		{"a service not known here", filepath.Join(UserdbServices, "io.example.Users")},
	} {
		os.MkdirAll(filepath.Dir(c.path), 0o755)
		if err := os.WriteFile(c.path, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
		if Of(1000, 1000) {
			t.Errorf("%s (%s): judged private", c.name, c.path)
		}
		os.Remove(c.path)
		if !Of(1000, 1000) {
			t.Errorf("%s removed: not judged private", c.name)
		}
	}
	// a drop-in directory that cannot be listed may hold anything
	os.Remove(etc)
	os.WriteFile(etc, nil, 0o644)
	if Of(1000, 1000) {
		t.Errorf("a drop-in path that is not a directory: judged private")
	}
	os.Remove(etc)
	// where nsswitch.conf does not name systemd, its records are never read
	os.WriteFile(filepath.Join(run, "bob:ann.membership"), []byte("{}"), 0o644)
	os.WriteFile(NSSwitchFile, []byte("passwd: files\ngroup: files\n"), 0o644)
	if !Of(1000, 1000) {
		t.Errorf("files only, a userdb drop-in nss does not read: not judged private")
	}
	for _, nss := range []string{"passwd: files systemd\ngroup: files\n", "group: files\ninitgroups: files systemd\n"} {
		os.WriteFile(NSSwitchFile, []byte(nss), 0o644)
		if Of(1000, 1000) {
			t.Errorf("nsswitch.conf %q and a membership drop-in: judged private", nss)
		}
	}
}
