package harness

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processStart is pid's start time (clock ticks since boot, /proc/PID/stat field 22), false
// when there is no such process.
func processStart(pid int) (string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces and parentheses
	if i < 0 {
		return "", false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 { // field 3 (state) is f[0]: field 22 is f[19]
		return "", false
	}
	return f[19], true
}

// ownedByMe: path is this user's own (Lstat: a symlink is judged as itself).
func ownedByMe(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
