package sandbox

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

func self() instance {
	i := instance{Host: hostname(), PID: os.Getpid()}
	i.Machine = firstFile("/etc/machine-id", "/var/lib/dbus/machine-id")
	i.Boot = firstFile("/proc/sys/kernel/random/boot_id")
	i.PIDNS, _ = os.Readlink("/proc/self/ns/pid")
	i.Start, _ = startTime(i.PID)
	return i
}

func firstFile(paths ...string) string {
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil {
			if s := strings.TrimSpace(string(b)); s != "" {
				return s
			}
		}
	}
	return ""
}

// startTime is field 22 of /proc/PID/stat: the process's start, in clock ticks since boot.
func startTime(pid int) (uint64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// comm (field 2) may hold spaces and parentheses: fields restart after the last ')'.
	s := string(b)
	j := strings.LastIndexByte(s, ')')
	if j < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no comm field", pid)
	}
	f := strings.Fields(s[j+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	return strconv.ParseUint(f[19], 10, 64) // field 22 is the 20th after comm
}

// judge says whether the instance that labelled a container is alive, seen from me. It says
// dead only when sure: same machine, same pid namespace, and either another boot or no
// process with that pid and start time. Anything it cannot see is unknown, and left alone.
func (me instance) judge(o instance) liveness {
	if o.Host != me.Host || o.Machine != me.Machine {
		return unknown
	}
	if o.Boot == "" || me.Boot == "" {
		return unknown
	}
	if o.Boot != me.Boot {
		return dead // that serve ran before this machine's last boot
	}
	if o.PIDNS == "" || o.PIDNS != me.PIDNS {
		return unknown
	}
	if o.PID == me.PID && o.Start == me.Start {
		return alive
	}
	st, err := startTime(o.PID)
	if os.IsNotExist(err) || errors.Is(err, syscall.ESRCH) {
		// ESRCH: a process that had the pid (reused: the machine makes many) ended while its
		// stat was read
		return dead
	}
	if err != nil {
		return unknown
	}
	if st != o.Start {
		return dead // the pid was reused by another process
	}
	return alive
}
