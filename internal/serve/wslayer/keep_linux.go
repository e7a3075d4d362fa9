package wslayer

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/lazy"
)

// See KeepCallBytes (wslayer.go) for what is kept and its bounds. Only regular files are kept
// (never a link, a device, a setuid bit: mode 0600), written beneath the call's directory by
// descriptors with no link followed (os.Root).

type keeper struct {
	store, call string
	ws          string   // the workspace: its real path names its store beneath store
	dir         string   // this call's directory ("" until the first file)
	root        *os.Root // opened on dir
	files       int
	bytes       int64
	skipped     int  // refused files not kept (a bound, an error)
	unavailable bool // the store could not be made: nothing more is tried
	// Why files were not kept, for the result (trial49 F7: it said "past the bound … or the store
	// … unavailable", never which, and named the store as a literal $XDG_STATE_HOME).
	overBound int    // of skipped: past KeepCallFiles or KeepCallBytes
	storeErr  string // the store could not be made: where, and the error
	firstErr  string // the first entry that could not be read or copied
}

// over counts a refused file not kept for the call's bound.
func (k *keeper) over() { k.skipped++; k.overBound++ }

// fail counts a refused entry not kept because it could not be read or copied.
func (k *keeper) fail(rel string, err error) {
	k.skipped++
	if k.firstErr == "" && err != nil {
		k.firstErr = fmt.Sprintf("%s: %v", rel, err)
	}
}

// keep copies what a refused entry of the layer holds (a regular file, or a directory's regular
// files) beneath the call's keep directory, at rel.
func (c *committer) keep(up int, name, rel string) {
	if c.r.Keep == "" || c.recovering || mutated("workspace-refused-not-kept") {
		return
	}
	if c.kept == nil {
		c.kept = &keeper{store: c.r.Keep, call: c.call, ws: c.lower}
	}
	c.kept.entry(up, name, rel, 0)
}

func (k *keeper) entry(up int, name, rel string, depth int) {
	if k.unavailable {
		k.skipped++
		return
	}
	if k.files >= KeepCallFiles && !mutated("workspace-keep-unbounded") {
		k.over() // a directory past the bound counts as one: its tree is not walked
		return
	}
	// an entry that cannot be read is a refused entry not kept, counted (review41 #10): the
	// result's "N more not kept" must not undercount
	uncounted := mutated("workspace-keep-errors-uncounted")
	var st unix.Stat_t
	if err := unix.Fstatat(up, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		if !uncounted {
			k.fail(rel, err)
		}
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		k.file(up, name, rel, st.Size)
	case unix.S_IFDIR:
		if depth >= MaxDepth {
			k.over()
			return
		}
		d, err := openDir(up, name)
		if err != nil {
			if !uncounted {
				k.fail(rel, err)
			}
			return
		}
		defer unix.Close(d)
		list, err := readNames(d)
		if err != nil && !uncounted {
			k.fail(rel, err) // the names not read: at least one entry
		}
		for _, n := range list {
			k.entry(d, n, path.Join(rel, n), depth+1)
		}
	}
}

func (k *keeper) file(up int, name, rel string, size int64) {
	if (k.files >= KeepCallFiles || k.bytes+size > KeepCallBytes) && !mutated("workspace-keep-unbounded") {
		k.over()
		return
	}
	if k.root == nil && !k.open() {
		k.skipped++
		return
	}
	src, err := unix.Openat(up, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		k.fail(rel, err)
		return
	}
	in := os.NewFile(uintptr(src), name)
	defer in.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := k.root.MkdirAll(dir, 0o700); err != nil {
			k.fail(rel, err)
			return
		}
	}
	out, err := k.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		k.fail(rel, err)
		return
	}
	n, err := io.Copy(out, io.LimitReader(in, KeepCallBytes-k.bytes))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	k.bytes += n
	if err != nil {
		k.fail(rel, err)
		return
	}
	k.files++
}

// The store is one per user, and was pruned to the last KeepCalls calls whoever made them: one
// session's refused calls removed another session's kept draft, which its result had named
// (atk40b F6). Now each workspace has a store of its own beneath it (WorkspaceKeepName), bounded
// to its own last KeepCalls calls, and the whole is bounded across workspaces by keepStoreCalls
// and keepStoreBytes, pruning the workspace holding the most first and never the newest call of
// any workspace: one workspace's calls can only evict its own, or another's older calls while
// it holds less than that one.
var (
	keepStoreCalls       = 250
	keepStoreBytes int64 = 256 << 20
)

// callName is a call directory's name (sortable by time); a store's other entries are
// workspaces' stores.
var callName = lazy.Regexp(`^[0-9]{8}T[0-9]{6}\.[0-9]{9}Z`)

// WorkspaceKeepName is the name of the workspace ws's store beneath KeepRoot: its base name, for
// whoever reads the store, and a short hash of its real path (two workspaces of one name differ).
func WorkspaceKeepName(ws string) string {
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		real = filepath.Clean(ws)
	}
	sum := sha256.Sum256([]byte(real))
	base := strings.TrimLeft(strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, filepath.Base(real)), "._")
	if len(base) > 32 {
		base = base[:32]
	}
	if base == "" {
		base = "workspace"
	}
	return base + "-" + hex.EncodeToString(sum[:6])
}

// open makes this call's directory in its workspace's store, after removing that workspace's
// oldest calls past KeepCalls-1, and other calls past the store's bounds (pruneStore).
func (k *keeper) open() bool {
	store := k.store
	if !mutated("workspace-keep-store-per-workspace") {
		store = filepath.Join(k.store, WorkspaceKeepName(k.ws))
	}
	if err := os.MkdirAll(store, 0o700); err != nil {
		k.unavailable, k.storeErr = true, err.Error()
		return false
	}
	k.prune(store)
	if store != k.store && !mutated("workspace-keep-store-global-bound") {
		pruneStore(k.store)
	}
	id := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return -1
	}, k.call)
	if len(id) > 64 {
		id = id[:64]
	}
	name := time.Now().UTC().Format("20060102T150405.000000000Z")
	if id != "" {
		name += "-" + id
	}
	dir := filepath.Join(store, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		k.unavailable, k.storeErr = true, err.Error()
		return false
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		k.unavailable, k.storeErr = true, err.Error()
		return false
	}
	k.dir, k.root = dir, r
	return true
}

// calls lists the call directories in dir, oldest first.
func calls(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		if e.IsDir() && callName().MatchString(e.Name()) {
			out = append(out, e.Name())
		}
	}
	slices.Sort(out)
	return out
}

// prune removes the oldest call directories (names sort by time) of store so that this call's
// makes at most KeepCalls; anything else in the store is left alone.
func (k *keeper) prune(store string) {
	if mutated("workspace-keep-unbounded") {
		return
	}
	cs := calls(store)
	for len(cs) >= KeepCalls {
		_ = os.RemoveAll(filepath.Join(store, cs[0]))
		cs = cs[1:]
	}
}

// pruneStore keeps the whole store, every workspace's together, within keepStoreCalls calls and
// keepStoreBytes (with room for one more call of KeepCallBytes): while over, the oldest call of
// the workspace holding the most (bytes when over the byte bound, else calls) is removed, never
// a workspace's newest call. Call directories left at the top by an earlier version (one store
// for all) belong to no workspace: they go first.
func pruneStore(root string) {
	if mutated("workspace-keep-unbounded") {
		return
	}
	type group struct {
		dir   string
		calls []string
		sizes []int64
		bytes int64
	}
	ents, err := os.ReadDir(root)
	if err != nil {
		return
	}
	legacy := &group{dir: root}
	groups := []*group{legacy}
	for _, e := range ents {
		switch {
		case !e.IsDir():
		case callName().MatchString(e.Name()):
			legacy.calls = append(legacy.calls, e.Name())
		default:
			dir := filepath.Join(root, e.Name())
			groups = append(groups, &group{dir: dir, calls: calls(dir)})
		}
	}
	slices.Sort(legacy.calls)
	n, total := 0, int64(0)
	for _, g := range groups {
		for _, c := range g.calls {
			sz := treeBytes(filepath.Join(g.dir, c))
			g.sizes = append(g.sizes, sz)
			g.bytes += sz
		}
		n += len(g.calls)
		total += g.bytes
	}
	for n+1 > keepStoreCalls || total+KeepCallBytes > keepStoreBytes {
		byBytes := total+KeepCallBytes > keepStoreBytes
		most := legacy // an earlier version's, no workspace's: first to go
		if len(legacy.calls) == 0 {
			most = nil
			for _, g := range groups[1:] {
				if len(g.calls) <= 1 {
					continue // never a workspace's newest call: its result named it
				}
				if most == nil || byBytes && g.bytes > most.bytes || !byBytes && len(g.calls) > len(most.calls) {
					most = g
				}
			}
		}
		if most == nil {
			return
		}
		_ = os.RemoveAll(filepath.Join(most.dir, most.calls[0]))
		n--
		total -= most.sizes[0]
		most.bytes -= most.sizes[0]
		most.calls, most.sizes = most.calls[1:], most.sizes[1:]
	}
}

// treeBytes is what the regular files beneath dir hold.
func treeBytes(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				n += fi.Size()
			}
		}
		return nil
	})
	return n
}

// done closes the keeper and says, in out, where its files are.
func (k *keeper) done(out *executor.WorkspaceChanges) {
	if k == nil {
		return
	}
	if k.root != nil {
		k.root.Close()
	}
	out.Kept, out.KeptFiles, out.NotKept = k.dir, k.files, k.skipped
	if k.skipped > 0 && !mutated("workspace-keep-why-unsaid") {
		out.NotKeptWhy = k.why()
	}
}

// why says what kept the skipped files out of the store: the call's bound, the store (its real
// path), an entry that could not be copied; each with its count.
func (k *keeper) why() string {
	var parts []string
	if k.overBound > 0 {
		parts = append(parts, fmt.Sprintf("%d past the bound of %d files, %d bytes a call", k.overBound, KeepCallFiles, KeepCallBytes))
	}
	if k.storeErr != "" {
		parts = append(parts, fmt.Sprintf("the store under %s could not be made (%s): check that directory's owner, mode and free space", k.store, k.storeErr))
	} else if rest := k.skipped - k.overBound; rest > 0 && k.firstErr != "" {
		parts = append(parts, fmt.Sprintf("%d could not be copied (%s)", rest, k.firstErr))
	}
	return strings.Join(parts, "; ")
}
