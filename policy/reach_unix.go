//go:build unix

package policy

import (
	"fmt"
	"os"
	"slices"
	"syscall"
)

// noSearch says why uid may not pass the directory st (its owner and mode), or "" if it may.
// root passes every one.
func noSearch(st os.FileInfo, uid int, gids []int) string {
	s, ok := st.Sys().(*syscall.Stat_t)
	if !ok || uid == 0 {
		return ""
	}
	m := st.Mode().Perm()
	switch {
	case int(s.Uid) == uid:
		if m&0o100 != 0 {
			return ""
		}
	case slices.Contains(gids, int(s.Gid)):
		if m&0o010 != 0 {
			return ""
		}
	default:
		if m&0o001 != 0 {
			return ""
		}
	}
	return fmt.Sprintf("(owner uid %d, mode %v)", s.Uid, m)
}
