package sandbox

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// processStart is a process's start time in clock ticks since boot (field 22 of
// /proc/PID/stat): with the pid it identifies a process across pid reuse.
func processStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "?"
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the command name may hold spaces
	if i < 0 {
		return "?"
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return "?"
	}
	return f[19]
}

// alive reports whether pid is still the process that started at start.
func alive(pid int, start string) bool {
	if pid <= 0 {
		return false
	}
	if err := syscall.Kill(pid, 0); err != nil && err != syscall.EPERM {
		return false
	}
	return start == "?" || processStart(pid) == start
}
