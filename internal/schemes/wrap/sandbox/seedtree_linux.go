package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// The npm seed is a privileged tree copy (root, when wrap runs as root) from trees other
// servers write (a wider policy's cache) into the tree a narrower server gets. So it follows
// nothing on either side (attack round atk36, F1 and F1b): the source is walked by directory
// descriptors, each directory opened beneath the source's root with no link followed before
// it is listed (a directory swapped for a link mid-walk is not entered); the seed is built by
// descriptors beneath its own root (openat2 RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS for the
// parent, mkdirat, openat O_CREAT|O_EXCL|O_NOFOLLOW), nothing is written or appended through
// an entry that is a link (left out, and wrap says so); the only links copied are the ones npm
// makes (seedLinkKept); and one seed lists at most maxSeedEntries entries, maxSeedDepth deep.

var (
	// maxSeedEntries bounds the files, directories and links one seed lists, all sources
	// together (an npx tree holds thousands; a client's content store tens of thousands).
	maxSeedEntries = 1 << 20
	// maxSeedDepth bounds how deep beneath a cache's root a seed goes.
	maxSeedDepth = 64
)

const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS

// openBeneath opens rel beneath the directory root, following no link on the way or at the end.
func openBeneath(root int, rel string, flags int) (int, error) {
	return unix.Openat2(root, rel, &unix.OpenHow{Flags: uint64(flags | unix.O_NOFOLLOW | unix.O_CLOEXEC), Resolve: resolveBeneath})
}

// openRoot opens the directory path (a cache's root; the links in path itself are the
// caller's: the client's npm cache, or wrap's own cache directory).
func openRoot(path string) (int, error) {
	return unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
}

// seedEntering runs as a walk opens a directory it listed (tests: a server that swaps it for a
// link meanwhile).
var seedEntering = func(rel string) {}

// seedEntry is one entry of a source tree: dir is its directory (opened beneath the source's
// root, no link followed), name its name there, rel its path from the root, st its lstat.
type seedEntry struct {
	dir       int
	name, rel string
	st        unix.Stat_t
}

func (e *seedEntry) isDir() bool  { return e.st.Mode&unix.S_IFMT == unix.S_IFDIR }
func (e *seedEntry) isLink() bool { return e.st.Mode&unix.S_IFMT == unix.S_IFLNK }
func (e *seedEntry) isFile() bool { return e.st.Mode&unix.S_IFMT == unix.S_IFREG }

// open opens the entry's file for reading (no link followed; O_NONBLOCK: a FIFO swapped in
// does not hold the seed) and checks by its descriptor that it is a regular file.
func (e *seedEntry) open() (*os.File, *unix.Stat_t, error) {
	fd, err := openBeneath(e.dir, e.name, unix.O_RDONLY|unix.O_NONBLOCK)
	if err != nil {
		return nil, nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, nil, fmt.Errorf("%s: not a regular file", e.rel)
	}
	return os.NewFile(uintptr(fd), e.rel), &st, nil
}

// walk calls fn for every entry beneath sub (a directory's path from root, the directory
// rootPath names), depth first, and enters the directories fn says to (descend). Each
// directory is opened beneath root with no link followed before it is listed. Every entry
// counts against b's bound of entries; past it, or deeper than maxSeedDepth, walk says
// errSeedFull. What cannot be read is left out (npm fetches what the cache lacks).
func (b *seedBudget) walk(root int, rootPath, sub string, fn func(e *seedEntry) (descend bool, err error)) error {
	return b.walkDir(root, rootPath, filepath.Clean(sub), 0, fn)
}

func (b *seedBudget) walkDir(root int, rootPath, rel string, depth int, fn func(e *seedEntry) (bool, error)) error {
	unbounded := mutated("wrap-npm-seed-entries-unbounded")
	if depth > maxSeedDepth && !unbounded {
		return errSeedFull
	}
	seedEntering(rel)
	var fd int
	var err error
	if mutated("wrap-npm-seed-src-by-path") {
		fd, err = unix.Open(filepath.Join(rootPath, rel), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = openBeneath(root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	}
	if err != nil {
		return nil // gone, or a link by now: not listed
	}
	f := os.NewFile(uintptr(fd), rel)
	defer f.Close()
	for {
		names, rerr := f.Readdirnames(256)
		for _, name := range names {
			if b.entries <= 0 && !unbounded {
				return errSeedFull
			}
			b.entries--
			e := seedEntry{dir: fd, name: name, rel: filepath.Join(rel, name)}
			if unix.Fstatat(fd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW) != nil {
				continue
			}
			descend, err := fn(&e)
			if err != nil {
				return err
			}
			if descend && e.isDir() {
				if err := b.walkDir(root, rootPath, e.rel, depth+1, fn); err != nil {
					return err
				}
			}
		}
		if rerr != nil || len(names) == 0 {
			return nil
		}
	}
}

// seedDir is the seed being made, changed only by descriptors beneath its root: no entry of
// it that is a link is followed, written or appended to (one source's link is never the way
// another source's file takes).
type seedDir struct {
	root int
	path string
	// the parent directory last opened (a walk lists a directory's entries together)
	at     string
	parent int
}

func openSeedDir(path string) (*seedDir, error) {
	fd, err := openRoot(path)
	if err != nil {
		return nil, err
	}
	return &seedDir{root: fd, path: path, parent: -1}, nil
}

func (d *seedDir) close() {
	if d.parent >= 0 {
		unix.Close(d.parent)
	}
	unix.Close(d.root)
}

// dir opens the seed's directory rel (to make or write an entry in it).
func (d *seedDir) dir(rel string) (int, error) {
	if d.parent >= 0 && d.at == rel {
		return d.parent, nil
	}
	if d.parent >= 0 {
		unix.Close(d.parent)
		d.parent = -1
	}
	var fd int
	var err error
	if mutated("wrap-npm-seed-dst-follows") {
		fd, err = unix.Open(filepath.Join(d.path, rel), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	} else {
		fd, err = openBeneath(d.root, rel, unix.O_RDONLY|unix.O_DIRECTORY)
	}
	if err != nil {
		return -1, err
	}
	d.at, d.parent = rel, fd
	return fd, nil
}

// errLinkThere: the seed holds a link (or another kind of entry) where a source has a
// directory or an index bucket: nothing goes through it.
var errLinkThere = errors.New("the seed holds a link or other entry there, which is not followed")

// lstat says what the seed holds at rel (ENOENT: nothing).
func (d *seedDir) lstat(rel string) (*unix.Stat_t, error) {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(p, filepath.Base(rel), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, err
	}
	return &st, nil
}

// mkdir makes the directory rel; made: it was not there. One that is there is kept when it is
// a directory (a link there: errLinkThere).
func (d *seedDir) mkdir(rel string) (made bool, err error) {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return false, err
	}
	err = unix.Mkdirat(p, filepath.Base(rel), 0o755)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, unix.EEXIST) {
		var st unix.Stat_t
		flags := unix.AT_SYMLINK_NOFOLLOW
		if mutated("wrap-npm-seed-dst-follows") {
			flags = 0 // as os.MkdirAll: a link to a directory is taken for one
		}
		if unix.Fstatat(p, filepath.Base(rel), &st, flags) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
			return false, nil
		}
		return false, errLinkThere
	}
	return false, err
}

// create makes the new file rel (never through a link, never an entry that is there).
func (d *seedDir) create(rel string, mode uint32) (*os.File, error) {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return nil, err
	}
	fd, err := unix.Openat(p, filepath.Base(rel), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, mode)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), rel), nil
}

// appendTo opens the seed's file rel to append to it: a regular file of one name only (a
// link, or a hard link's other name, is not written through: errLinkThere). size: its size.
func (d *seedDir) appendTo(rel string) (f *os.File, size int64, err error) {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return nil, 0, err
	}
	flags := unix.O_WRONLY | unix.O_APPEND | unix.O_CLOEXEC
	follows := mutated("wrap-npm-seed-dst-follows")
	if !follows {
		flags |= unix.O_NOFOLLOW | unix.O_NONBLOCK
	}
	fd, err := unix.Openat(p, filepath.Base(rel), flags, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, 0, errLinkThere
	}
	if err != nil {
		return nil, 0, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || !follows && (st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 1) {
		unix.Close(fd)
		return nil, 0, errLinkThere
	}
	return os.NewFile(uintptr(fd), rel), st.Size, nil
}

// symlink makes the link rel (nothing there yet) leading to target.
func (d *seedDir) symlink(target, rel string) error {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return err
	}
	return unix.Symlinkat(target, p, filepath.Base(rel))
}

// link makes rel a hard link to the source's entry e (not a link's target: linkat without
// AT_SYMLINK_FOLLOW).
func (d *seedDir) link(e *seedEntry, rel string) error {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return err
	}
	return unix.Linkat(e.dir, e.name, p, filepath.Base(rel), 0)
}

// remove takes rel out of the seed (a file, a link or an empty directory).
func (d *seedDir) remove(rel string) error {
	p, err := d.dir(filepath.Dir(rel))
	if err != nil {
		return err
	}
	err = unix.Unlinkat(p, filepath.Base(rel), 0)
	if errors.Is(err, unix.EISDIR) {
		err = unix.Unlinkat(p, filepath.Base(rel), unix.AT_REMOVEDIR)
	}
	return err
}

// truncate cuts the seed's regular file rel back to size.
func (d *seedDir) truncate(rel string, size int64) error {
	fd, err := openBeneath(d.root, rel, unix.O_WRONLY|unix.O_NONBLOCK)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return errLinkThere
	}
	return unix.Ftruncate(fd, size)
}

// seedLinkKept says whether the seed copies a source's link rel (its path from the cache's
// root) leading to target: only the links npm makes there. An npx tree's bin,
// _npx/H/node_modules/.bin/NAME (or a nested node_modules/.bin) leading to ../PKG/FILE:
// one "..", then only names, so it stays in that node_modules whatever links it passes (each
// kept link does); and, with content (the client's content store), a link a seed made from
// _cacache/content-v2 to that store's file of the same name. Any other link a server left in
// its cache (one climbing out with "..", an absolute one) is not copied.
func seedLinkKept(rel, target, content string) bool {
	if mutated("wrap-npm-seed-any-link") {
		return !strings.HasPrefix(target, "/") || content != "" && strings.HasPrefix(target, content+"/")
	}
	if store, ok := strings.CutPrefix(rel, filepath.Join("_cacache", "content-v2")+"/"); ok {
		return content != "" && target == filepath.Join(content, store)
	}
	dir := filepath.Dir(rel)
	if !strings.HasPrefix(rel, "_npx/") || filepath.Base(dir) != ".bin" || filepath.Base(filepath.Dir(dir)) != "node_modules" {
		return false
	}
	down, ok := strings.CutPrefix(target, "../")
	if !ok || down == "" {
		return false
	}
	for _, c := range strings.Split(down, "/") {
		if c == "" || c == "." || c == ".." {
			return false
		}
	}
	return true
}

// refused notes an entry of src the seed left out for what it is (a link, or a link where src
// has more), once a source.
func (b *seedBudget) refused(src, rel string, why string) {
	if b.refusedFrom == nil {
		b.refusedFrom = map[string]bool{}
	}
	if b.refusedFrom[src] {
		return
	}
	b.refusedFrom[src] = true
	b.notes = append(b.notes, fmt.Sprintf("the server's npm cache was seeded without %s from %s (nor any other such entry of it): %s", rel, src, why))
}

const (
	whyLink      = "a link npm does not make there (only an npx tree's node_modules/.bin links, leading into that node_modules, are copied)"
	whyLinkThere = "the seed holds a link there (from another source): nothing is written through it"
)
