package sandbox

import (
	"fmt"
	"os"
	"syscall"
)

// owner is the uid and gid owning path.
func owner(path string) (uid, gid int, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return -1, -1, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return -1, -1, fmt.Errorf("%s: no owner", path)
	}
	return int(st.Uid), int(st.Gid), nil
}
