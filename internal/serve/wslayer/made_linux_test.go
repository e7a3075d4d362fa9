package wslayer

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// madeCommit commits a call that makes the directories dirs (and removes rm) in ws, with the
// layer root root.
func madeCommit(t *testing.T, root, ws string, dirs []string, rm ...string) *madeResult {
	t.Helper()
	l, err := New(root, ws)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if err := os.MkdirAll(filepath.Join(l.Upper, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range rm {
		// a whiteout: the call removed r
		if err := unix.Mknod(filepath.Join(l.Upper, r), unix.S_IFCHR, 0); err != nil {
			t.Skipf("no whiteout here: %v", err)
		}
	}
	w, err := l.Commit(Rules{Protect: policy.DefaultProtect, Quota: 64 << 20, UID: -1, GID: -1, SandboxPath: ws})
	if err != nil {
		t.Fatal(err)
	}
	return &madeResult{sum: Summary(w), refused: func(rel string) string { return refusedWhy(w, rel) }}
}

type madeResult struct {
	sum     string
	refused func(string) string
}

// madeNowSet is what serve's record says calls made in ws, as the next commit reads it.
func madeNowSet(t *testing.T, root, ws string) map[string]bool {
	t.Helper()
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	return loadMade(root, ws, fd).set()
}

func madeWS(t *testing.T) (root, ws string) {
	t.Setenv("HOME", t.TempDir())
	noXattr(t)
	ws = filepath.Join(t.TempDir(), "ws")
	if err := os.MkdirAll(filepath.Join(ws, "packages", "app"), 0o755); err != nil {
		t.Fatal(err)
	}
	return t.TempDir(), ws
}

// serve's made record is its own state, never parsed from text a call chose (attack round
// atk37b, F2): a call's directory "zz\npackages" wrote the line "packages", and the host's
// packages/ counted as call-made for good. Now the entry is quoted: the record names the call's
// directory and not packages/; a record that does not parse counts as nothing made (not as
// everything). Red when the record is a path a line again (mutant workspace-made-record-text).
func TestMadeRecordNamesForgeNothing(t *testing.T) {
	root, ws := madeWS(t)
	madeCommit(t, root, ws, []string{"zz\npackages", "a b\"\\x00c"})
	got := madeNowSet(t, root, ws)
	if got["packages"] || got["zz"] {
		t.Errorf("the record names the host's packages/ (or zz) made by a call: %v", got)
	}
	if !got["zz\npackages"] || !got["a b\"\\x00c"] || len(got) != 2 {
		t.Errorf("the record holds %v, want the call's two directories", got)
	}
	// a record that does not parse (a line cut, a stray one) is nothing made, and written again
	file := madeFile(root, ws)
	b, _ := os.ReadFile(file)
	for _, bad := range []string{string(b) + "packages\n", string(b) + "1 2 3 \"packages\"", "packages\n" + string(b)} {
		os.WriteFile(file, []byte(bad), 0o600)
		if got := madeNowSet(t, root, ws); len(got) != 0 {
			t.Errorf("a record that does not parse (%q) counts %v as made, want nothing", bad, got)
		}
	}
	madeCommit(t, root, ws, []string{"later"})
	if got := madeNowSet(t, root, ws); !got["later"] || len(got) != 1 {
		t.Errorf("after a commit the record holds %v, want later only (the one that did not parse dropped)", got)
	}
}

// An entry counts only while the same directory is at its path: one the host removed and made
// again (or changed) is the host's now, the record's entry dropped. Red when the identity is not
// checked (mutant workspace-made-identity).
func TestMadeRecordEntryIsItsDirectory(t *testing.T) {
	root, ws := madeWS(t)
	madeCommit(t, root, ws, []string{"vendor", "tools/x"})
	if got := madeNowSet(t, root, ws); !got["vendor"] || !got["tools"] {
		t.Fatalf("the record holds %v, want vendor and tools", got)
	}
	time.Sleep(20 * time.Millisecond) // past the change time's tick
	os.RemoveAll(filepath.Join(ws, "vendor"))
	os.MkdirAll(filepath.Join(ws, "vendor", "lib"), 0o755) // the host's vendor/ now
	os.WriteFile(filepath.Join(ws, "tools", "host.sh"), []byte("x"), 0o644)
	if got := madeNowSet(t, root, ws); got["vendor"] || got["tools"] {
		t.Errorf("the record still counts %v made, after the host replaced vendor/ and wrote in tools/", got)
	}
}

// The record is bounded by what serve needs (attack round atk37b, F6: one call of 20,000
// directories named with newlines added 1 M entries, never pruned, read at every commit): one
// entry per top directory a commit made (not per line of its name, not per directory below it),
// and entries whose directory is gone are dropped at the next commit. Red when they are kept
// (mutant workspace-made-unpruned).
func TestMadeRecordPruned(t *testing.T) {
	root, ws := madeWS(t)
	var dirs []string
	for i := range 30 {
		dirs = append(dirs, fmt.Sprintf("p%02d\na\nb\nc/sub/deeper", i))
	}
	madeCommit(t, root, ws, append(dirs, "keep"))
	if got := madeNowSet(t, root, ws); len(got) != 31 {
		t.Fatalf("the record holds %d entries, want 31 (one per top directory made): %v", len(got), got)
	}
	var rm []string
	for i := range 30 {
		rm = append(rm, fmt.Sprintf("p%02d\na\nb\nc", i))
	}
	madeCommit(t, root, ws, nil, rm...)
	b, _ := os.ReadFile(madeFile(root, ws))
	if n := strings.Count(string(b), "\n"); n != 2 || !strings.Contains(string(b), `"keep"`) {
		t.Errorf("after the call removed 30 of its directories the record holds %d lines, want the header and keep: %q", n, b)
	}
}

// The bound fails closed: past maxMadeEntries a commit on a workspace that keeps no user xattrs
// makes no new top directory (refused, the bound named: one serve could not walk last would put
// a call's padding before the host's directories again); below a recorded directory, or one the
// same commit made, directories are made as before. Red when the bound lets them be made
// unrecorded (mutant workspace-made-bound-open).
func TestMadeRecordBoundFailsClosed(t *testing.T) {
	root, ws := madeWS(t)
	old := maxMadeEntries
	maxMadeEntries = 5
	t.Cleanup(func() { maxMadeEntries = old })
	madeCommit(t, root, ws, []string{"d0/a/b", "d1", "d2", "d3"})
	r := madeCommit(t, root, ws, []string{"d4", "d5", "d6", "d0/new", "packages/app/x"})
	for _, d := range []string{"d4", "d0/new", "d0/a/b"} {
		if _, err := os.Stat(filepath.Join(ws, d)); err != nil {
			t.Errorf("%s was not made: %s", d, r.sum)
		}
	}
	for _, d := range []string{"d5", "d6", "packages/app/x"} {
		if _, err := os.Stat(filepath.Join(ws, d)); err == nil {
			t.Errorf("%s was made past the record's bound (5): %s", d, r.sum)
		} else if why := r.refused(d); !strings.Contains(why, "holds 5 (its bound)") {
			t.Errorf("%s refused %q, want the bound named (%s)", d, why, r.sum)
		}
	}
	if got := madeNowSet(t, root, ws); len(got) != 5 {
		t.Errorf("the record holds %v, want 5 entries", got)
	}
}
