//go:build unix

package generate

import (
	"os"
	"syscall"
	"testing"
)

func ownerMode(t *testing.T, path string) (int, int, os.FileMode) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s := st.Sys().(*syscall.Stat_t)
	return int(s.Uid), int(s.Gid), st.Mode().Perm()
}
