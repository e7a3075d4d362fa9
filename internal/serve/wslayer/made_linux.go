package wslayer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The walk that finds nested repositories and agents' configs looks at the directories calls
// made last (madeMark), so an earlier call's padding cannot use it up before the host's. The
// mark is a user xattr; a workspace on NFS, sshfs or another FUSE filesystem, WSL's /mnt/c,
// vfat or exfat, or tmpfs before Linux 6.6 keeps none, and setting it failed silently: three
// calls of 34,000 directories then used up the walk (attack round atk37, F2). Where the
// workspace refuses the mark, serve keeps it itself: the top directories each commit made, in
// a file of the layer root (serve's own, private), read at each commit.
//
// That record is serve's own state, so nothing in it is parsed from text a call chose (attack
// round atk37b, F2: a directory named "zz\npackages" wrote the line "packages", and the host's
// packages/ counted as call-made for good): each entry is the directory's identity (device,
// inode, change time) and its path quoted (strconv.Quote), a record that does not parse is
// absent (nothing made), and an entry counts only while the same directory is at its path
// (a directory the host made there since, or changed, is the host's). It is bounded by what
// serve needs, not by what a call sends (atk37b F6: 1 M entries from one call, never pruned,
// read into a map at each commit): an entry per top directory a commit made, entries whose
// directory is gone or another dropped at each commit (the record rewritten whole, renamed
// into place), at most maxMadeEntries; past that a commit makes no new directory outside the
// ones it made (refused, the bound named), since one serve could not walk last would again
// let a call's padding come before the host's directories.

// madePrefix names the files of the record in the layer root: made-<hash of the workspace>.
const madePrefix = "made-"

// madeHeader begins the record (its format: lines "dev ino ctime-ns quoted-path").
const madeHeader = "mcpsandbox made 2\n"

// maxMadeEntries bounds the record's entries: more call-made top directories than the walk
// looks at (maxGitWalk) cannot all be walked anyway (a variable for the tests).
var maxMadeEntries = 100_000

// maxMadeRecord bounds the record's bytes (a longer one does not parse: nothing made).
const maxMadeRecord = 32 << 20

// setMadeMark sets the mark on the directory fd (a variable: the tests stand in for a
// filesystem that keeps no user xattrs).
var setMadeMark = func(fd int) error { return unix.Fsetxattr(fd, madeMark, []byte{'1'}, 0) }

// xattrKept remembers, per workspace, whether it keeps the mark (MadeMarkKept, the commits).
var xattrKept sync.Map // workspace -> bool

func madeFile(root, ws string) string {
	h := sha256.Sum256([]byte(filepath.Clean(ws)))
	return filepath.Join(root, madePrefix+hex.EncodeToString(h[:12]))
}

// madeID is who a directory is: a directory the host made at the same path since (or one it
// changed: the change time) is another.
type madeID struct {
	dev, ino uint64
	ctime    int64 // ns
}

func madeIDOf(st *unix.Stat_t) madeID {
	return madeID{dev: st.Dev, ino: st.Ino, ctime: st.Ctim.Nano()}
}

// madeRecord is serve's record of one workspace as a commit holds it: the entries that still
// name their directory (ids, paths from the root), the ones this commit adds, and whether the
// file must be written again (an entry dropped, a record that did not parse).
type madeRecord struct {
	file  string
	ids   map[string]madeID
	add   []string
	dirty bool
}

// loadMade reads serve's record of what calls made in the workspace ws (wsFd open on it),
// keeping the entries whose directory is still the one recorded; nil where the workspace is
// known to keep the xattr mark (no record needed). Its cost is the record's live entries: one
// stat each.
func loadMade(root, ws string, wsFd int) *madeRecord {
	if root == "" {
		return nil
	}
	if v, ok := xattrKept.Load(filepath.Clean(ws)); ok && v.(bool) {
		return nil
	}
	r := &madeRecord{file: madeFile(root, ws), ids: map[string]madeID{}}
	b, err := readMade(r.file)
	if err != nil {
		r.dirty = !errors.Is(err, fs.ErrNotExist) // rewritten: what did not parse is gone
		return r
	}
	ids, ok := parseMade(b)
	if !ok {
		r.dirty = true
		return r
	}
	for rel, id := range ids {
		var st unix.Stat_t
		if mutated("workspace-made-identity") || mutated("workspace-made-record-text") {
			r.ids[rel] = id
			continue
		}
		if unix.Fstatat(wsFd, rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR && madeIDOf(&st) == id {
			r.ids[rel] = id
		} else {
			r.dirty = true // gone, or the host's now: dropped
		}
	}
	return r
}

func readMade(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxMadeRecord+1))
	if err == nil && len(b) > maxMadeRecord {
		err = errors.New("too long")
	}
	return b, err
}

// parseMade parses the record; ok false when any of it does not parse (then nothing counts as
// made: never everything).
func parseMade(b []byte) (map[string]madeID, bool) {
	if mutated("workspace-made-record-text") { // as before atk37b F2: a path a line, as named
		out := map[string]madeID{}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l != "" {
				out[l] = madeID{}
			}
		}
		return out, true
	}
	s, ok := strings.CutPrefix(string(b), madeHeader)
	if !ok {
		return nil, false
	}
	out := map[string]madeID{}
	for s != "" {
		line, rest, ok := strings.Cut(s, "\n")
		if !ok || len(out) >= maxMadeEntries {
			return nil, false
		}
		s = rest
		f := strings.SplitN(line, " ", 4)
		if len(f) != 4 {
			return nil, false
		}
		dev, e1 := strconv.ParseUint(f[0], 10, 64)
		ino, e2 := strconv.ParseUint(f[1], 10, 64)
		ct, e3 := strconv.ParseInt(f[2], 10, 64)
		rel, e4 := strconv.Unquote(f[3])
		if e1 != nil || e2 != nil || e3 != nil || e4 != nil || !madeRel(rel) {
			return nil, false
		}
		out[rel] = madeID{dev: dev, ino: ino, ctime: ct}
	}
	return out, true
}

// madeRel: rel is a clean path below the workspace root.
func madeRel(rel string) bool {
	return rel != "" && rel != "." && !strings.ContainsRune(rel, 0) && path.Clean(rel) == rel &&
		!path.IsAbs(rel) && rel != ".." && !strings.HasPrefix(rel, "../")
}

// set is the directories the record says calls made (for the walk).
func (r *madeRecord) set() map[string]bool {
	if r == nil {
		return nil
	}
	out := make(map[string]bool, len(r.ids))
	for rel := range r.ids {
		out[rel] = true
	}
	return out
}

// under says whether rel lies at or below an entry (its directory is already walked last).
func (r *madeRecord) under(rel string) bool {
	for d := rel; d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if _, ok := r.ids[d]; ok {
			return true
		}
	}
	return false
}

// madeFull says why the commit must not make the directory rel ("" = it may): the workspace
// keeps no user xattrs and serve's record is at its bound, so the directory could not be
// walked last; its padding would come before the host's directories again.
func (c *committer) madeFull(rel string) string {
	r := c.made
	if r == nil || c.madeNow[path.Dir(rel)] || mutated("workspace-made-bound-open") {
		return ""
	}
	if v, ok := xattrKept.Load(filepath.Clean(c.lower)); ok && v.(bool) {
		return ""
	}
	if len(r.ids)+len(r.add) < maxMadeEntries || r.under(rel) {
		return ""
	}
	return fmt.Sprintf("the workspace keeps no user xattrs and serve's record of the directories calls made in it holds %d (its bound): "+
		"a new one could not be walked last, so none is made; remove directories calls made there, or use a workspace on a filesystem that keeps user xattrs (ext4, xfs, btrfs)", maxMadeEntries)
}

// markMade marks the directory the commit made at rel (wsub open on it): the xattr, or where
// the workspace refuses it, serve's record (the top one of what this commit made only: the
// walk looks at what lies below a made directory with it).
func (c *committer) markMade(wsub int, rel string) {
	if c.madeNow == nil {
		c.madeNow = map[string]bool{}
	}
	c.madeNow[rel] = true
	err := setMadeMark(wsub)
	if err == nil {
		xattrKept.Store(filepath.Clean(c.lower), true)
		return
	}
	xattrKept.Store(filepath.Clean(c.lower), false)
	if mutated("workspace-made-record") || c.made == nil || c.madeNow[path.Dir(rel)] || c.made.under(rel) {
		return
	}
	c.made.add = append(c.made.add, rel)
}

// saveMade writes the record again when this commit changed it: the new entries, the kept
// ones (their change time as now: this commit may have written in them), none whose directory
// is gone. Written whole to a new file renamed into place, so a reader sees all of one.
func (c *committer) saveMade() {
	r := c.made
	if r == nil || mutated("workspace-made-record") {
		return
	}
	changed := r.dirty || len(r.add) > 0
	for rel, id := range r.ids {
		var st unix.Stat_t
		if unix.Fstatat(c.wsRoot, rel, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || st.Dev != id.dev || st.Ino != id.ino {
			if !mutated("workspace-made-unpruned") {
				delete(r.ids, rel)
				changed = true
			}
		} else if now := madeIDOf(&st); now != id {
			r.ids[rel], changed = now, true
		}
	}
	for _, rel := range r.add {
		var st unix.Stat_t
		if unix.Fstatat(c.wsRoot, rel, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			r.ids[rel] = madeIDOf(&st)
		}
	}
	r.add = nil
	if !changed {
		return
	}
	if len(r.ids) == 0 {
		_ = os.Remove(r.file)
		return
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.file), filepath.Base(r.file)+".new-")
	if err != nil {
		return
	}
	b := bufio.NewWriter(tmp) // streamed: not the record's size again in memory
	b.WriteString(madeHeader)
	for rel, id := range r.ids {
		if mutated("workspace-made-record-text") {
			b.WriteString(rel + "\n")
			continue
		}
		fmt.Fprintf(b, "%d %d %d %s\n", id.dev, id.ino, id.ctime, strconv.Quote(rel))
	}
	err = b.Flush()
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil || os.Rename(tmp.Name(), r.file) != nil {
		_ = os.Remove(tmp.Name())
	}
}

// MadeMarkKept says whether the workspace ws keeps the user xattr the commit marks the
// directories calls made with (probed once per workspace: set and removed on a scratch
// directory made there), and what that means, for serve --check and explain.
func MadeMarkKept(ws string) (bool, string) {
	if mutated("workspace-made-probe") { // the check said nothing of it
		return true, madeSay(true)
	}
	if v, ok := xattrKept.Load(filepath.Clean(ws)); ok {
		return v.(bool), madeSay(v.(bool))
	}
	d, err := os.MkdirTemp(ws, ".mcpsandbox-xattr-probe-")
	if err != nil {
		return false, "could not probe the workspace for user xattrs (" + err.Error() + "): " + madeSay(false)
	}
	defer os.Remove(d)
	fd, err := unix.Open(d, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, madeSay(false)
	}
	defer unix.Close(fd)
	kept := setMadeMark(fd) == nil
	xattrKept.Store(filepath.Clean(ws), kept)
	return kept, madeSay(kept)
}

func madeSay(kept bool) string {
	if kept {
		return "the workspace keeps user xattrs: the directories calls make are marked there, and the commit's walk looks at them last"
	}
	return "the workspace keeps no user xattrs (NFS, sshfs/FUSE, WSL's /mnt/c, vfat, old tmpfs): serve records the directories calls make in its layer root instead; past the walk's bound, what it did not reach is refused, not applied"
}
