package sandbox

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"
)

// errSeedFull: the seed reached its bound (maxSeed) of disk written.
var errSeedFull = errors.New("the npm cache's seed reached its bound")

// seedChecked runs after a source's size was judged and before it is copied (tests: a source
// that grows meanwhile).
var seedChecked = func(string) {}

// seedBudget bounds the disk one seed writes, across all its sources: the bytes really
// written, holes kept as holes, so neither a sparse file (no disk to its server, its whole
// apparent size copied as zeros) nor a file grown after its source was judged makes the seed
// write more than maxSeed (attack round atk35b, F5).
type seedBudget struct {
	left  int64
	notes []string
	// entries: how many more entries the seed lists (maxSeedEntries, seedtree_linux.go)
	entries     int
	refusedFrom map[string]bool
}

func newSeedBudget() *seedBudget { return &seedBudget{left: maxSeed, entries: maxSeedEntries} }

// skipped notes a source left out of the seed, once.
func (b *seedBudget) skipped(src string) {
	note := fmt.Sprintf("the server's npm cache was not seeded from %s (or not wholly: its content store): more than %d MiB to write (the seed's bound, counted on disk), "+
		"or more than %d files and directories, or deeper than %d; npm fetches what the cache lacks when the policy lets it reach registry.npmjs.org", src, maxSeed>>20, maxSeedEntries, maxSeedDepth)
	if !slices.Contains(b.notes, note) {
		b.notes = append(b.notes, note)
	}
}

// charge takes n bytes (whole 4 KiB blocks) from the budget, or says errSeedFull.
func (b *seedBudget) charge(n int64) error {
	n = (n + 4095) &^ 4095
	if n > b.left {
		return errSeedFull
	}
	b.left -= n
	return nil
}

// copyData copies in's first size bytes (its size when it was opened: a file that grows while
// it is copied is not followed) to the new file out, writing only its data: a hole stays a
// hole (SEEK_DATA, SEEK_HOLE), and every byte written is charged to b.
func (b *seedBudget) copyData(out, in *os.File, size int64) error {
	if mutated("wrap-npm-seed-unbounded") {
		_, err := io.Copy(out, io.LimitReader(in, maxSeed))
		return err
	}
	fd := int(in.Fd())
	for off := int64(0); off < size; {
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if errors.Is(err, unix.ENXIO) {
			break // no data past off: the rest is a hole
		}
		end := size
		if err != nil { // a file system that cannot say: all of it is data
			data = off
		} else if hole, err := unix.Seek(fd, data, unix.SEEK_HOLE); err == nil {
			end = min(hole, size)
		}
		if data >= end {
			break
		}
		if err := b.charge(end - data); err != nil {
			return err
		}
		if _, err := io.Copy(io.NewOffsetWriter(out, data), io.NewSectionReader(in, data, end-data)); err != nil {
			return err
		}
		off = end
	}
	return out.Truncate(size) // the holes at the end
}

// appendAll appends in's first size bytes to out (an index bucket: small, written whole),
// charged to b.
func (b *seedBudget) appendAll(out, in *os.File, size int64) error {
	if err := b.charge(size); err != nil && !mutated("wrap-npm-seed-unbounded") {
		return err
	}
	_, err := io.Copy(out, io.LimitReader(in, size))
	return err
}

// journal is what one source's overlay added to the seed (paths from its root), to take it
// out again.
type journal struct {
	made  []string // files, links and directories it created, in order
	grown []grownFile
}

type grownFile struct {
	path string
	size int64
}

func (j *journal) undo(d *seedDir) {
	for _, g := range slices.Backward(j.grown) {
		_ = d.truncate(g.path, g.size)
	}
	for _, p := range slices.Backward(j.made) {
		_ = d.remove(p)
	}
}

// emptyDir removes what dir holds, keeping dir.
func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return err
		}
	}
	return nil
}
