package wslayer

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The walk that finds nested repositories and agents' configs looks at the directories calls
// made last (madeMark), so an earlier call's padding cannot use it up before the host's. The
// mark is a user xattr; a workspace on NFS, sshfs or another FUSE filesystem, WSL's /mnt/c,
// vfat or exfat, or tmpfs before Linux 6.6 keeps none, and setting it failed silently: three
// calls of 34,000 directories then used up the walk (attack round atk37, F2). Where the
// workspace refuses the mark, serve keeps it itself: the top directories each commit made,
// one path a line, in a file of the layer root (serve's own, private), read at each commit.

// madePrefix names the files of the record in the layer root: made-<hash of the workspace>.
const madePrefix = "made-"

// maxMadeRecord bounds the record (past it new directories are not recorded: the walk's
// bound then fails closed, unwalked).
const maxMadeRecord = 64 << 20

// setMadeMark sets the mark on the directory fd (a variable: the tests stand in for a
// filesystem that keeps no user xattrs).
var setMadeMark = func(fd int) error { return unix.Fsetxattr(fd, madeMark, []byte{'1'}, 0) }

// xattrKept remembers, per workspace, whether it keeps the mark (MadeMarkKept, the commits).
var xattrKept sync.Map // workspace -> bool

func madeFile(root, ws string) string {
	h := sha256.Sum256([]byte(filepath.Clean(ws)))
	return filepath.Join(root, madePrefix+hex.EncodeToString(h[:12]))
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
	if mutated("workspace-made-record") || c.layerRoot == "" || c.madeNow[path.Dir(rel)] {
		return
	}
	f, err := os.OpenFile(madeFile(c.layerRoot, c.lower), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || st.Size() > maxMadeRecord {
		return
	}
	_, _ = f.WriteString(rel + "\n")
}

// loadMade reads serve's record of what calls made in the workspace ws (nil when none).
func loadMade(root, ws string) map[string]bool {
	f, err := os.Open(madeFile(root, ws))
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]bool{}
	sc := bufio.NewScanner(io.LimitReader(f, maxMadeRecord+4096))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out[l] = true
		}
	}
	return out
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
