// Package privgroup says whether a group is a user's private group: the group Debian and Ubuntu
// give each user (USERGROUPS_ENAB), of the user's own name, with no one else in it. Under those
// systems' umask 002 a user's files are group-writable by it, and writable by that group means
// writable by the user alone, so the ownership rules (the policy file's, the binaries') treat it as
// the owner's own write bit, as Debian's OpenSSH does for StrictModes (its user-group-modes patch).
package privgroup

import (
	"bufio"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// The files read; variables for the tests (which cannot edit the machine's).
var (
	GroupFile    = "/etc/group"
	PasswdFile   = "/etc/passwd"
	NSSwitchFile = "/etc/nsswitch.conf"

	// UserdbDirs hold systemd's JSON user and group records (*.user, *.group, *.membership,
	// their *-privileged parts), which nss-systemd serves beside /etc/passwd and /etc/group
	// (systemd's userdb; atk35 F1).
	UserdbDirs = []string{"/etc/userdb", "/run/userdb", "/run/host/userdb", "/usr/local/lib/userdb", "/usr/lib/userdb"}
	// UserdbServices holds the sockets of the services nss-systemd also asks (io.systemd.Home:
	// systemd-homed's users, with their memberships; io.systemd.Machine: containers' users).
	UserdbServices = "/run/systemd/userdb"
)

// quietServices are the userdb services that add no member to any group the files list:
// systemd's own dynamic users (gids of their own, in 61184-65519), the multiplexer that only
// gathers the others and the drop-ins (both judged here themselves), and the NSS bridge (which
// serves what glibc's own sources give, and nss-systemd skips).
var quietServices = map[string]bool{
	"io.systemd.DynamicUser":       true,
	"io.systemd.Multiplexer":       true,
	"io.systemd.NameServiceSwitch": true,
}

// Of reports whether gid is uid's private group: /etc/group names it after uid's /etc/passwd
// entry, lists no member but that user, and no other /etc/passwd entry has it as its primary
// group. Anything it cannot read or find, and gid 0, is not private: a group known only to a
// directory service (LDAP) is judged strictly.
func Of(gid, uid uint32) bool {
	if gid == 0 || !localOnly() {
		return false
	}
	name, primaryOthers, ok := passwdFacts(uid, gid)
	if !ok || (primaryOthers && !mutated("private-group-primary")) || name == "" {
		return false
	}
	gname, members, ok := groupEntry(gid)
	if !ok || gname != name {
		return false
	}
	for _, m := range members {
		if m != "" && m != name && !mutated("private-group-members") {
			return false
		}
	}
	return true
}

var nssAction = lazy.Regexp(`\[[^]]*\]`)

// localOnly: users and groups come from the files read here alone (nsswitch.conf names files,
// and systemd, for passwd, group and initgroups, which glibc reads supplementary groups by). A
// directory service (sss, ldap, nis, winbind) may add members to a group the files list empty:
// then no group is judged private. So may systemd, through its userdb records and services
// (atk35 F1): it counts as local only where it has none to serve but its dynamic users. A
// missing nsswitch.conf is glibc's default: files.
func localOnly() bool {
	f, err := os.Open(NSSwitchFile)
	if err != nil {
		return os.IsNotExist(err)
	}
	defer f.Close()
	systemd := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		db, srcs, ok := strings.Cut(sc.Text(), ":")
		if db = strings.TrimSpace(db); !ok || (db != "passwd" && db != "group" && db != "initgroups") {
			continue
		}
		if i := strings.IndexByte(srcs, '#'); i >= 0 {
			srcs = srcs[:i]
		}
		// "[NOTFOUND=return]" actions may be written apart or glued to a service
		// ("[SUCCESS=continue]sss": atk34b F3): what is left of each field is a service
		for _, src := range strings.Fields(nssAction().ReplaceAllString(srcs, " ")) {
			systemd = systemd || src == "systemd"
			if src != "files" && src != "systemd" && !mutated("private-group-nss") {
				return false
			}
		}
	}
	return sc.Err() == nil && (!systemd || userdbQuiet() || mutated("private-group-userdb"))
}

// userdbQuiet: systemd's userdb has nothing to add to the files: no entry in any drop-in
// directory, and no service socket but quietServices. Any other entry, or a directory that
// exists but cannot be listed, may add a member or a primary group: not quiet.
func userdbQuiet() bool {
	for _, d := range UserdbDirs {
		if ents, err := os.ReadDir(d); len(ents) > 0 || (err != nil && !errors.Is(err, fs.ErrNotExist)) {
			return false
		}
	}
	ents, err := os.ReadDir(UserdbServices)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	for _, e := range ents {
		if !quietServices[e.Name()] && !toMultiplexer(e) {
			return false
		}
	}
	return true
}

// toMultiplexer: a service that is a link to the multiplexer's socket (systemd-userdbd makes
// io.systemd.DropIn and others so) serves what the multiplexer gathers, judged here already; a
// host running userdbd refused every private group otherwise (atk35b F3).
func toMultiplexer(e fs.DirEntry) bool {
	if e.Type()&fs.ModeSymlink == 0 {
		return false
	}
	t, err := os.Readlink(filepath.Join(UserdbServices, e.Name()))
	return err == nil && filepath.Base(t) == "io.systemd.Multiplexer" && quietServices[filepath.Base(t)]
}

// passwdFacts finds uid's name, and whether another entry has gid as its primary group.
func passwdFacts(uid, gid uint32) (name string, others, ok bool) {
	ok = scan(PasswdFile, func(f []string) bool {
		u, ok1 := id(f, 2)
		g, ok2 := id(f, 3)
		switch {
		case !ok1 || !ok2:
			return false
		case u == uid && name == "":
			name = f[0]
		case g == gid:
			others = true
		}
		return true
	})
	return name, others, ok
}

// groupEntry finds gid's name and members; a gid listed twice is not judged (ok false).
func groupEntry(gid uint32) (name string, members []string, ok bool) {
	n := 0
	read := scan(GroupFile, func(f []string) bool {
		g, ok := id(f, 2)
		if !ok || len(f) < 4 {
			return false
		}
		if g == gid {
			n++
			name, members = f[0], strings.Split(f[3], ",")
		}
		return true
	})
	return name, members, read && n == 1
}

// id is field i as an id written in plain decimal digits. glibc also reads "+1002" and " 1002"
// as 1002 (atk34b F1: a second group giving another user the owner's gid went unseen): any
// other spelling, or a missing field, makes the whole file unjudged.
func id(f []string, i int) (uint32, bool) {
	if len(f) <= i || f[i] == "" || strings.Trim(f[i], "0123456789") != "" {
		return 0, false
	}
	v, err := strconv.ParseUint(f[i], 10, 32)
	return uint32(v), err == nil
}

// scan calls each for every entry (colon-separated fields) of a file, skipping blank and comment
// lines after leading blanks as glibc does; false when it cannot be read, holds NIS compat (+/-)
// entries, or an entry each does not understand (the file is then not judged at all).
func scan(path string, each func([]string) bool) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		line := strings.TrimLeft(sc.Text(), " \t")
		if line == "" || line[0] == '#' {
			continue
		}
		if line[0] == '+' || line[0] == '-' {
			return false // NIS compat entries: the file is not the whole of it
		}
		if !each(strings.Split(line, ":")) && !mutated("private-group-odd-entry") {
			return false
		}
	}
	return sc.Err() == nil
}
