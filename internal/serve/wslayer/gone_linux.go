package wslayer

import (
	"fmt"
	"os"
	"path"

	"golang.org/x/sys/unix"
)

// A file or directory the program changed is copied into the layer with overlayfs's origin mark:
// the file handle of the workspace entry it was copied from (struct ovl_fb: version, magic,
// length, flags, handle type, the file system's uuid, then the handle's bytes). When the
// workspace has nothing at that name any more at the commit, another writer deleted or renamed
// it away while the call ran, unless the program itself moved it there: a rename leaves a
// whiteout at the old name, whose workspace entry is still that very file, and a hard link keeps
// its other name. The other writer's deletion is then kept, as another writer's change is
// (changedSince), and the call's version is not applied: it was brought back from the dead
// before (attack round atk25a, F3). Where the file system gives no handles, or the mark is
// missing, nothing is judged, as before: so for a serve that is not root, whose layer is
// mounted in a user namespace, where overlayfs writes the mark without a handle.

// originOf is the handle (type, bytes) the origin mark of the layer's entry name in up names, or
// "" when it has none.
func (c *committer) originOf(up int, name string) string {
	attr := "trusted.overlay.origin"
	if c.userxattr {
		attr = "user.overlay.origin"
	}
	var b [256]byte
	n, err := unix.Lgetxattr(fmt.Sprintf("/proc/self/fd/%d/%s", up, name), attr, b[:])
	// version 0, magic 0xfb, the length, flags, the type, the 16-byte uuid, the handle
	if err != nil || n < 22 || b[1] != 0xfb || int(b[2]) != n {
		return ""
	}
	return handleKey(int32(b[4]), b[21:n])
}

func handleKey(typ int32, b []byte) string { return fmt.Sprintf("%d:%x", typ, b) }

// handleAt is the handle of the workspace entry rel (its last component not followed), or "".
func (c *committer) handleAt(rel string) string {
	h, _, err := unix.NameToHandleAt(c.wsRoot, rel, 0)
	if err != nil {
		return ""
	}
	return handleKey(h.Type(), h.Bytes())
}

// goneWhileRunning says, and lists, when the layer's entry rel (name in up) is a changed copy of
// a workspace entry that another writer removed from the workspace after the call copied it.
func (c *committer) goneWhileRunning(up, ws int, rel, name string, dir bool) bool {
	if c.since == 0 || c.replayed(rel) || mutated("commit-deletion-unchecked") {
		return false
	}
	var wst unix.Stat_t
	if err := unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
		return false
	}
	origin := c.originOf(up, name)
	if origin == "" || c.ownMoves()[origin] {
		return false
	}
	what := "this call's version is not applied"
	if dir {
		what = "nothing this call wrote in it is applied"
	}
	c.refuse(rel, "deleted or renamed away in the workspace by another writer (another session's call or write_file, another serve, the user) after this call changed it; their deletion is kept, and %s", what)
	return true
}

// ownMoves are the handles of the workspace entries still at a name the program deleted (a
// rename's old name is a whiteout in the layer) or changed in place: the files the program
// itself may have moved or linked elsewhere. Made once, when the first entry is found gone;
// bounded as the commit is (MaxEntries, MaxDepth).
func (c *committer) ownMoves() map[string]bool {
	if c.moves != nil {
		return c.moves
	}
	c.moves = map[string]bool{}
	seen := 0
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth >= MaxDepth {
			return
		}
		es, err := os.ReadDir(path.Join(c.upperRoot, dir))
		if err != nil {
			return
		}
		for _, e := range es {
			if seen++; seen > MaxEntries {
				return
			}
			rel := path.Join(dir, e.Name())
			if e.IsDir() {
				walk(rel, depth+1)
			}
			var st unix.Stat_t
			if unix.Lstat(path.Join(c.upperRoot, rel), &st) != nil {
				continue
			}
			whiteout := st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0
			if !whiteout && !c.hasOrigin(rel) {
				continue
			}
			if h := c.handleAt(rel); h != "" {
				c.moves[h] = true
			}
		}
	}
	walk("", 0)
	return c.moves
}

// hasOrigin says whether the layer's entry rel carries an origin mark.
func (c *committer) hasOrigin(rel string) bool {
	up, err := openDir(unix.AT_FDCWD, path.Join(c.upperRoot, path.Dir(rel)))
	if err != nil {
		return false
	}
	defer unix.Close(up)
	return c.originOf(up, path.Base(rel)) != ""
}
