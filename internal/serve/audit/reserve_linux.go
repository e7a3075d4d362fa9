package audit

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// reserveSpace allocates n bytes of f from off on without changing its size
// (FALLOC_FL_KEEP_SIZE): appends there then need no new blocks. A filesystem without
// fallocate reserves nothing (nil: appends go on as before).
func reserveSpace(f *os.File, off, n int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return nil
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) {
		for {
			ferr = unix.Fallocate(int(fd), unix.FALLOC_FL_KEEP_SIZE, off, n)
			if ferr != unix.EINTR {
				return
			}
		}
	}); err != nil {
		return nil
	}
	if errors.Is(ferr, unix.EOPNOTSUPP) || errors.Is(ferr, unix.ENOSYS) || errors.Is(ferr, unix.EINVAL) {
		return nil
	}
	return ferr
}
