//go:build unix

package harness

import (
	"bytes"
	"os"
	"strconv"
	"syscall"
)

var sigStop, sigCont = syscall.SIGSTOP, syscall.SIGCONT

type statT struct {
	Size  int64
	Nlink uint64
	Uid   uint32
}

// lstat is the owner and link count the detectors judge a file by.
func lstat(p string) (statT, bool) {
	var st syscall.Stat_t
	if syscall.Lstat(p, &st) != nil {
		return statT{}, false
	}
	return statT{Size: st.Size, Nlink: uint64(st.Nlink), Uid: st.Uid}, true
}

// stopped reports whether the process is stopped (state T in /proc/PID/stat); true where /proc
// cannot tell, so callers never wait in vain.
func stopped(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i < 0 || i+2 >= len(b) || b[i+2] == 'T' || b[i+2] == 't'
}
