//go:build unix

package engine

import (
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// socketOwner names the socket's group and describes its owner, group and mode
// ("owner root, group docker, mode 0660"), names where the system has them.
func socketOwner(path string) (group, desc string, err error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", "", fmt.Errorf("%s: no owner information", path)
	}
	owner, group := strconv.FormatUint(uint64(st.Uid), 10), strconv.FormatUint(uint64(st.Gid), 10)
	if u, err := user.LookupId(owner); err == nil {
		owner = u.Username
	}
	if g, err := user.LookupGroupId(group); err == nil {
		group = g.Name
	}
	return group, fmt.Sprintf("owner %s, group %s, mode %04o", owner, group, fi.Mode().Perm()), nil
}
