//go:build unix

package main

import (
	"os"
	"syscall"
)

// ownerUID is the uid owning path, if it can be told.
func ownerUID(path string) (int, bool) {
	fi, err := os.Stat(path)
	if err != nil || path == "" {
		return 0, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
