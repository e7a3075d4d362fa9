package audit

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// fallocate is unix.Fallocate; tests make it fail as a file system without it does.
var fallocate = unix.Fallocate

// reserveSpace allocates n bytes of f from off on without changing its size
// (FALLOC_FL_KEEP_SIZE): appends there then need no new blocks. A file system without
// fallocate (NFSv3, many FUSE file systems, ramfs) is errNoFallocate.
func reserveSpace(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return fmt.Errorf("%w: %v", errNoFallocate, err)
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return fmt.Errorf("%w: %v", errNoFallocate, err)
	}
	if errors.Is(ferr, unix.EOPNOTSUPP) || errors.Is(ferr, unix.ENOSYS) || errors.Is(ferr, unix.EINVAL) {
		return errNoFallocate
	}
	return ferr
}

// spaceFor is nil when f's file system has n bytes free for f's writer, what a log that cannot
// allocate ahead checks before each line (nothing is held: another writer can take them). A
// file system that states no size (ramfs) tells nothing: nil.
func spaceFor(f *os.File, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var st unix.Statfs_t
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = unix.Fstatfs(int(fd), &st) }); err != nil || serr != nil || st.Blocks == 0 || st.Bsize <= 0 {
		return nil
	}
	if free := st.Bavail * uint64(st.Bsize); free < uint64(n) {
		return fmt.Errorf("%w: %d bytes free on its file system, %d wanted (it has no fallocate: the room cannot be held)", unix.ENOSPC, free, n)
	}
	return nil
}

// releaseSpace frees f's blocks from its end, size, on (the room reserveSpace held):
// FALLOC_FL_PUNCH_HOLE past the end where the file system does that, and a truncation to its
// own size, which frees them on ext4. The caller holds f's lock, so size is its end.
func releaseSpace(f *os.File, size int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		// past anything reserve holds (two reserves and a line), from the block the end is in
		ferr = fallocate(int(fd), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, size, 4*Reserve+MaxLine)
	}); err != nil {
		return err
	}
	// ext4 punches nothing past the end: a truncation to the size the lock holds frees it there
	if terr := f.Truncate(size); terr != nil {
		return terr
	}
	return ferr
}

// allocated is the bytes of disk st's file holds (st_blocks).
func allocated(st os.FileInfo) int64 {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Blocks * 512
	}
	return 1 << 62
}
