package sandbox

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// serve says at its start which read paths another local user could create or replace (attack
// round atk23: one missing under /tmp could be made by anyone, a link to what they chose, and
// serve, as root, bound what it led to for the commands); one the server's user owns is no
// warning.
func TestReadPathRiskWarnedAtStart(t *testing.T) {
	shared := t.TempDir()
	os.Chmod(shared, 0o777|os.ModeSticky)
	mine := filepath.Join(shared, "mine")
	os.Mkdir(mine, 0o755)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		warn bool
	}{{filepath.Join(shared, "missing"), true}, {mine, false}} {
		p := wcPolicy(t)
		alsec.Of(p).ReadPaths = []string{c.path}
		var log bytes.Buffer
		e, err := New(p, Options{HelperPath: exe, Logger: slog.New(slog.NewTextHandler(&log, nil)), DeferProbe: true})
		if err != nil {
			t.Fatal(err)
		}
		e.Close()
		got := strings.Contains(log.String(), "allowlist.read_paths[0]: ")
		if got != c.warn {
			t.Errorf("read path %s: warned %t, want %t; the log:\n%s", c.path, got, c.warn, log.String())
		}
		if c.warn && !strings.Contains(log.String(), "writable by every local user") {
			t.Errorf("the warning does not say who could create %s:\n%s", c.path, log.String())
		}
	}
}

// A read path, a missing one's directory and a pinned binary whose ACL lets another user write
// (the mode shows only the mask, as group write, forgiven for gid 0) are named at the start as
// one anyone could write is (atk35 F2); a read-only entry, or a mask without write, is not.
// Catches the perm-acl-ignored mutant.
func TestReadPathRiskACL(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	os.Mkdir(dir, 0o755)
	bin := filepath.Join(t.TempDir(), "wc")
	os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755)
	other := "1003"
	if os.Geteuid() == 1003 {
		other = "1004"
	}
	for _, c := range []struct {
		name string
		acl  []string
		want string // "": no risk
	}{
		{"a named user with write", []string{"u:" + other + ":rwx"}, "writable by uid " + other + " through its ACL entry user:" + other + ":rwx"},
		{"a named user, read only", []string{"u:" + other + ":r-x"}, ""},
		{"a named user with write, the mask without", []string{"u:" + other + ":rwx", "m::r-x"}, ""},
	} {
		testenv.SetACL(t, dir, c.acl...)
		testenv.SetACL(t, bin, c.acl...)
		for _, r := range []struct{ what, risk string }{
			{"an existing read path", ReadPathRisk(dir)},
			{"a missing read path", ReadPathRisk(filepath.Join(dir, "missing", "x"))},
			{"a pinned binary", fmt.Sprint(CheckOwnership(bin))},
		} {
			if r.risk == "<nil>" {
				r.risk = ""
			}
			switch {
			case c.want == "" && r.risk != "":
				t.Errorf("%s, %s: %s", r.what, c.name, r.risk)
			case c.want != "" && (!strings.Contains(r.risk, c.want) || !strings.Contains(r.risk, "setfacl -x u:"+other+" ")):
				t.Errorf("%s, %s: %q\nwant it to say %q and the setfacl that removes it", r.what, c.name, r.risk, c.want)
			}
		}
		for _, p := range []string{dir, bin} {
			unix.Removexattr(p, "system.posix_acl_access")
			os.Chmod(p, 0o755)
		}
	}
}

// A read path that is, or passes through, a link is judged where the link leads, as the kernel
// follows it (atk35b F7): a root-owned link to a missing name in a sticky world-writable
// directory, or into a directory another user owns, passed as the link alone. Controls: a link
// to a directory only root writes, and the same paths named directly, as before.
func TestReadPathRiskFollowsLinks(t *testing.T) {
	top := t.TempDir()
	shared := filepath.Join(top, "shared")
	os.Mkdir(shared, 0o755)
	os.Chmod(shared, 0o777|os.ModeSticky)
	theirs := filepath.Join(top, "theirs")
	os.Mkdir(theirs, 0o755)
	os.Chown(theirs, 4242, 4242)
	safe := filepath.Join(top, "safe")
	os.Mkdir(safe, 0o755)
	links := filepath.Join(top, "links")
	os.Mkdir(links, 0o755)
	os.Symlink(filepath.Join(shared, "missing"), filepath.Join(links, "dangling"))
	os.Symlink(theirs, filepath.Join(links, "theirs"))
	os.Symlink("../safe", filepath.Join(links, "safe"))
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(links, "dangling"), "writable by every local user"},
		{filepath.Join(links, "theirs"), "owned by uid 4242"},
		{filepath.Join(links, "theirs", "sub"), "uid 4242"},
		{filepath.Join(links, "safe"), ""},
		{filepath.Join(links, "safe", "missing"), ""},
	} {
		got := ReadPathRisk(c.path)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("ReadPathRisk(%s) = %q, want %q", c.path, got, c.want)
		}
	}
}
