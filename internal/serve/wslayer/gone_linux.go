package wslayer

import (
	"crypto/sha256"
	"fmt"
	"strings"

	"golang.org/x/sys/unix"
)

// A file or directory the program changed is copied into the layer with overlayfs's origin mark:
// the file handle of the workspace entry it was copied from (struct ovl_fb: version, magic,
// length, flags, handle type, the file system's uuid, then the handle's bytes). When the
// workspace has nothing at that name any more, another writer deleted or renamed it away while
// the call ran, unless the program itself moved it there: then it is still in the workspace at
// a name the layer has an entry for (deleted, replaced, changed or made again by the program),
// or beneath one, unchanged since the call started. The other writer's deletion is then kept, as
// another writer's change is (changedSince), and the call's version is not applied: the commit
// brought it back from the dead before (attack round atk25a, F3). All of it is judged before the
// commit removes anything (prepareGone): a rename's old name is gone from the workspace once its
// whiteout is applied. Where anything is in doubt nothing is judged, as before: the file system
// gives no handles, or the mark is missing (so for a serve that is not root, whose layer is
// mounted in a user namespace, where overlayfs writes the mark without a handle), a walk ran out
// of its budget (MaxEntries) or depth, or the commit finishes one its serve began and died in.

// originAt is the handle (type and bytes) the origin mark of the layer's entry name (in the
// directory up) names, or "" when it has none.
func (c *committer) originAt(up int, name string) string {
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

// handleIn is the handle of the entry name in the directory dir (not followed), or "".
func handleIn(dir int, name string) string {
	h, _, err := unix.NameToHandleAt(dir, name, 0)
	if err != nil {
		return ""
	}
	return handleKey(h.Type(), h.Bytes())
}

// goneWhileRunning says, and lists, when the layer's entry rel is one prepareGone found gone.
func (c *committer) goneWhileRunning(ws int, rel, name string, dir bool) bool {
	if !c.gone[rel] {
		return false
	}
	var wst unix.Stat_t
	if err := unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW); err != unix.ENOENT {
		return false // there again: judged as any entry there is
	}
	what := "this call's version is not applied"
	if dir {
		what = "nothing this call wrote in it is applied"
	}
	c.refuse(rel, "deleted or renamed away in the workspace by another writer (another session's call or write_file, another serve, the user) after this call changed it; their deletion is kept, and %s", what)
	return true
}

// goneScan is what prepareGone gathers from the layer.
type goneScan struct {
	cands  map[string]string // layer entries with an origin and no workspace entry: path -> origin
	olds   []old             // workspace names the layer has an entry for (scanLayer)
	budget int               // entries left to look at (MaxEntries for each walk)
	// removed are the workspace's regular files the call deleted (a whiteout over one), and
	// absent the sizes of the layer's marked files no workspace entry has: a move's two ends
	removed []string
	absent  map[int64]bool
}

// prepareGone fills c.gone, before the commit changes anything.
func (c *committer) prepareGone(up, ws int) {
	c.gone = map[string]bool{}
	if c.since == 0 || c.recovering || mutated("commit-deletion-unchecked") {
		return
	}
	g := &goneScan{cands: map[string]string{}, budget: MaxEntries, absent: map[int64]bool{}}
	c.scanLayer(g, up, ws, "", 0)
	c.movedFrom = c.removedContents(g)
	if len(g.cands) == 0 || g.budget < 0 {
		return // nothing to judge, or the layer not walked whole: judged as before (atk26b, F2)
	}
	handles := map[string]bool{}
	budget := MaxEntries
	for _, o := range g.olds {
		if !addTree(ws, o, c.since, handles, &budget) {
			return // not walked whole: nothing is judged
		}
	}
	for rel, origin := range g.cands {
		if !handles[origin] {
			c.gone[rel] = true
		}
	}
	c.judged = true
}

// unjudgedGone says whether the layer's entry rel is the call's copy of a workspace entry (it
// has the origin mark) that is gone from the workspace and was not judged (no handle in the
// mark, or prepareGone judged nothing): written back, it is named in the call's result, not
// silently (trial27: a serve that is not root brought back a file the user deleted).
func (c *committer) unjudgedGone(up, ws int, rel, name string) bool {
	var wst unix.Stat_t
	if unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW) != unix.ENOENT {
		return false // in the workspace (most entries): no mark read
	}
	attr := "trusted.overlay.origin"
	if c.userxattr {
		attr = "user.overlay.origin"
	}
	if _, err := unix.Lgetxattr(fmt.Sprintf("/proc/self/fd/%d/%s", up, name), attr, nil); err != nil || mutated("workspace-restored-silent") {
		return false // not a copy of a workspace entry: made by the call
	}
	if c.judged && c.originAt(up, name) != "" {
		return false // judged: the call's own move
	}
	if !c.judged && c.ownMove(up, name) {
		return false // the content of a file the call removed: its own move (trial38 F4)
	}
	for p := rel; strings.Contains(p, "/"); {
		p = p[:strings.LastIndex(p, "/")]
		if c.restoredDirs[p] {
			return false // said of the directory
		}
	}
	if c.restoredDirs == nil {
		c.restoredDirs = map[string]bool{}
	}
	c.restoredDirs[rel] = true // before its commit walks beneath it
	return true
}

// restored names rel in the result as written back though gone (unjudgedGone), once applied.
func (c *committer) restored(rel string) {
	if len(c.out.Restored) >= MaxRefused {
		c.out.RestoredMore++
		return
	}
	c.out.Restored = append(c.out.Restored, clipText(rel))
}

// scanLayer walks the layer's directory up (rel; ws is the workspace's directory there, or -1).
// Every workspace name the layer has an entry for is one the program deleted, replaced, changed
// or made again: what is there now (and, unless the layer's entry is a directory it merged
// with, everything beneath it) may be what the program moved elsewhere (attack round atk26b,
// F1: a rename followed by a new file at the old name).
func (c *committer) scanLayer(g *goneScan, up, ws int, rel string, depth int) {
	if depth >= MaxDepth {
		g.budget = -1 // not walked whole: nothing is judged
		return
	}
	for _, name := range names(up) {
		if g.budget--; g.budget < 0 {
			return
		}
		child := name
		if rel != "" {
			child = rel + "/" + name
		}
		var st, wst unix.Stat_t
		if unix.Fstatat(up, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
			continue
		}
		inWS := ws >= 0 && unix.Fstatat(ws, name, &wst, unix.AT_SYMLINK_NOFOLLOW) == nil
		dir := st.Mode&unix.S_IFMT == unix.S_IFDIR
		merged := dir && inWS && wst.Mode&unix.S_IFMT == unix.S_IFDIR && !c.opaque(child)
		if inWS {
			g.olds = append(g.olds, old{child, !merged})
		}
		if st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == 0 {
			if inWS && wst.Mode&unix.S_IFMT == unix.S_IFREG && len(g.removed) < maxMoveEnds {
				g.removed = append(g.removed, child)
			}
			continue // a whiteout
		}
		if !inWS && st.Mode&unix.S_IFMT == unix.S_IFREG && st.Size <= maxMoveBytes && c.marked(up, name) {
			g.absent[st.Size] = true
		}
		if origin := c.originAt(up, name); origin != "" && !inWS {
			g.cands[child] = origin
		}
		if !dir {
			continue
		}
		sub, err := openDir(up, name)
		if err != nil {
			continue
		}
		wsub := -1
		if merged {
			if wsub, err = openDir(ws, name); err != nil {
				wsub = -1
			}
		}
		c.scanLayer(g, sub, wsub, child, depth+1)
		unix.Close(sub)
		if wsub >= 0 {
			unix.Close(wsub)
		}
	}
}

// old is a workspace name the layer has an entry for; tree: what lies beneath it counts too.
type old struct {
	rel  string
	tree bool
}

// openParent opens the directory holding rel, from ws, following no link; the caller closes it.
func openParent(ws int, rel string) (dir int, name string, ok bool) {
	parts := strings.Split(rel, "/")
	dir, err := unix.Dup(ws)
	if err != nil {
		return -1, "", false
	}
	for _, p := range parts[:len(parts)-1] {
		next, err := openDir(dir, p)
		unix.Close(dir)
		if err != nil {
			return -1, "", false
		}
		dir = next
	}
	return dir, parts[len(parts)-1], true
}

// addTree adds the handles of the workspace entry o.rel and, for o.tree, of everything beneath
// it (links not followed), while budget lasts (false: it ran out, or a path could not be
// walked). Only entries unchanged since the call started count: another writer's rename onto a
// name the program touched sets the moved file's change time, and must not pass for the
// program's own move (attack round atk26b, F3).
func addTree(ws int, o old, since int64, handles map[string]bool, budget *int) bool {
	dir, name, ok := openParent(ws, o.rel)
	if !ok {
		return true // gone meanwhile: nothing there to be the program's
	}
	defer unix.Close(dir)
	return addBeneath(dir, name, o.tree, since, handles, budget, 0)
}

func addBeneath(dir int, name string, tree bool, since int64, handles map[string]bool, budget *int, depth int) bool {
	if *budget--; *budget < 0 || depth >= MaxDepth {
		return false
	}
	var st unix.Stat_t
	if unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return true
	}
	if st.Ctim.Nano() <= since {
		if h := handleIn(dir, name); h != "" {
			handles[h] = true
		}
	}
	if !tree || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return true
	}
	sub, err := openDir(dir, name)
	if err != nil {
		return true
	}
	defer unix.Close(sub)
	for _, n := range names(sub) {
		if !addBeneath(sub, n, true, since, handles, budget, depth+1) {
			return false
		}
	}
	return true
}

// A serve that is not root has no file handle in its overlay marks (its layer is mounted in a
// user namespace), so a file the call renamed (copied up, then moved: the mark stays, the old
// name is whited out) looked like a file another writer deleted while the call ran, and every
// plain `mv a b` said "written back though gone … another writer may have deleted" of b
// (trial38 F4), a warning that taught users to ignore it. Without handles the two ends of a
// move are matched by content: a marked file no workspace entry has, whose bytes are those of
// a workspace file the call removed, is the call's own move. Bounded: at most maxMoveEnds
// removed files of at most maxMoveBytes each are read, only those of a size a marked file has;
// a move past either is named as before (the warning errs on the side of saying). Content
// alone does not tell a move from a rewrite whose new bytes some removed file happens to hold
// (a duplicate, an empty file: atk38b F2, a file the user deleted mid-call written back with no
// word): a rename keeps what copy-up preserved, the file's mode and modification time (to the
// nanosecond, before the call began), while a rewrite sets a new time. So both ends must agree
// on those too; a call that forges them gains what `mv` gives it anyway.
const (
	maxMoveEnds  = 64
	maxMoveBytes = 1 << 20
)

// marked says whether the layer's entry name carries overlayfs's origin mark (with or without
// a handle).
func (c *committer) marked(up int, name string) bool {
	attr := "trusted.overlay.origin"
	if c.userxattr {
		attr = "user.overlay.origin"
	}
	_, err := unix.Lgetxattr(fmt.Sprintf("/proc/self/fd/%d/%s", up, name), attr, nil)
	return err == nil
}

// removedContents keys the workspace files the call removed by their content, read before the
// commit changes anything (the removal is applied before the other end may be reached).
func (c *committer) removedContents(g *goneScan) map[string]bool {
	if len(g.absent) == 0 || mutated("workspace-own-move-unmatched") {
		return nil
	}
	out := map[string]bool{}
	for _, rel := range g.removed {
		fd, err := openBeneath(c.wsRoot, rel)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG && g.absent[st.Size] {
			if k := contentKey(fd, st.Size); k != "" {
				out[moveKey(&st, k)] = true
			}
		}
		unix.Close(fd)
	}
	return out
}

// ownMove says whether the layer's regular file name holds the bytes of a file the call
// removed (removedContents).
func (c *committer) ownMove(up int, name string) bool {
	if len(c.movedFrom) == 0 {
		return false
	}
	fd, err := unix.Openat(up, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Size > maxMoveBytes {
		return false
	}
	if st.Mtim.Nano() > c.since && !mutated("workspace-own-move-content-only") {
		return false // written during the call: not what a rename keeps
	}
	k := contentKey(fd, st.Size)
	return k != "" && c.movedFrom[moveKey(&st, k)]
}

// moveKey is what a rename keeps of a file: its content key, mode and modification time.
func moveKey(st *unix.Stat_t, content string) string {
	if mutated("workspace-own-move-content-only") {
		return content
	}
	return fmt.Sprintf("%o:%d:%s", st.Mode&0o7777, st.Mtim.Nano(), content)
}

// contentKey is the size and SHA-256 of the regular file fd (size at most maxMoveBytes), or "".
func contentKey(fd int, size int64) string {
	if size > maxMoveBytes {
		return ""
	}
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var n int64
	for {
		m, err := unix.Pread(fd, buf, n)
		if m > 0 {
			h.Write(buf[:m])
			n += int64(m)
		}
		if err != nil || m == 0 || n > maxMoveBytes {
			break
		}
	}
	if n != size {
		return ""
	}
	return fmt.Sprintf("%d:%x", size, h.Sum(nil))
}

// openBeneath opens the regular file rel below the directory root, following no link.
func openBeneath(root int, rel string) (int, error) {
	how := unix.OpenHow{Flags: unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	return unix.Openat2(root, rel, &how)
}
