package wslayer

import (
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// See KeepCallBytes (wslayer.go) for what is kept and its bounds. Only regular files are kept
// (never a link, a device, a setuid bit: mode 0600), written beneath the call's directory by
// descriptors with no link followed (os.Root).

type keeper struct {
	store, call string
	dir         string   // this call's directory ("" until the first file)
	root        *os.Root // opened on dir
	files       int
	bytes       int64
	skipped     int  // refused files not kept (a bound, an error)
	unavailable bool // the store could not be made: nothing more is tried
}

// keep copies what a refused entry of the layer holds (a regular file, or a directory's regular
// files) beneath the call's keep directory, at rel.
func (c *committer) keep(up int, name, rel string) {
	if c.r.Keep == "" || c.recovering || mutated("workspace-refused-not-kept") {
		return
	}
	if c.kept == nil {
		c.kept = &keeper{store: c.r.Keep, call: c.call}
	}
	c.kept.entry(up, name, rel, 0)
}

func (k *keeper) entry(up int, name, rel string, depth int) {
	if k.unavailable || k.files >= KeepCallFiles && !mutated("workspace-keep-unbounded") {
		k.skipped++ // a directory past the bound counts as one: its tree is not walked
		return
	}
	var st unix.Stat_t
	if unix.Fstatat(up, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		k.file(up, name, rel, st.Size)
	case unix.S_IFDIR:
		if depth >= MaxDepth {
			k.skipped++
			return
		}
		d, err := openDir(up, name)
		if err != nil {
			return
		}
		defer unix.Close(d)
		list, _ := readNames(d)
		for _, n := range list {
			k.entry(d, n, path.Join(rel, n), depth+1)
		}
	}
}

func (k *keeper) file(up int, name, rel string, size int64) {
	if (k.files >= KeepCallFiles || k.bytes+size > KeepCallBytes) && !mutated("workspace-keep-unbounded") {
		k.skipped++
		return
	}
	if k.root == nil && !k.open() {
		k.skipped++
		return
	}
	src, err := unix.Openat(up, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		k.skipped++
		return
	}
	in := os.NewFile(uintptr(src), name)
	defer in.Close()
	if dir := path.Dir(rel); dir != "." {
		if err := k.root.MkdirAll(dir, 0o700); err != nil {
			k.skipped++
			return
		}
	}
	out, err := k.root.OpenFile(rel, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		k.skipped++
		return
	}
	n, err := io.Copy(out, io.LimitReader(in, KeepCallBytes-k.bytes))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	k.bytes += n
	if err != nil {
		k.skipped++
		return
	}
	k.files++
}

// open makes this call's directory, after removing the oldest calls' past KeepCalls-1.
func (k *keeper) open() bool {
	if err := os.MkdirAll(k.store, 0o700); err != nil {
		k.unavailable = true
		return false
	}
	k.prune()
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
	dir := filepath.Join(k.store, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		k.unavailable = true
		return false
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		k.unavailable = true
		return false
	}
	k.dir, k.root = dir, r
	return true
}

// prune removes the oldest call directories (names sort by time) so that this call's makes at
// most KeepCalls; anything else in the store is left alone.
func (k *keeper) prune() {
	if mutated("workspace-keep-unbounded") {
		return
	}
	ents, err := os.ReadDir(k.store)
	if err != nil {
		return
	}
	var calls []string
	for _, e := range ents {
		if e.IsDir() && len(e.Name()) > 8 && e.Name()[0] >= '0' && e.Name()[0] <= '9' {
			calls = append(calls, e.Name())
		}
	}
	slices.Sort(calls)
	for len(calls) >= KeepCalls {
		_ = os.RemoveAll(filepath.Join(k.store, calls[0]))
		calls = calls[1:]
	}
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
}
