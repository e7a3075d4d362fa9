package procid

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Self is this process.
func Self() Instance {
	i := Instance{Host: hostname(), PID: os.Getpid()}
	i.Machine = firstFile("/etc/machine-id", "/var/lib/dbus/machine-id")
	i.Boot = firstFile("/proc/sys/kernel/random/boot_id")
	_ = NoteBoot(i.Boot)
	i.PIDNS, _ = os.Readlink("/proc/self/ns/pid")
	i.Start, _ = StartTime(i.PID)
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

// StartTime is field 22 of /proc/PID/stat: the process's start, in clock ticks since boot.
func StartTime(pid int) (uint64, error) {
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

// Judge says whether o is alive, seen from me. Dead only when sure: same machine, and either
// an earlier boot this machine's record shows (NoteBoot: a clone shares the machine id, not
// the record of its boots), or the same pid namespace with no process of that pid and start
// time.
func (me Instance) Judge(o Instance) Liveness { return me.judge(o, ranHere) }

// JudgeLocal is Judge for what lies on this machine's own disk (a directory under its runtime
// or temporary directory): what another boot left there is this disk's earlier boot's, never a
// clone's live one.
func (me Instance) JudgeLocal(o Instance) Liveness {
	return me.judge(o, func(string) bool { return true })
}

func (me Instance) judge(o Instance, ranHere func(boot string) bool) Liveness {
	if o.Host != me.Host || o.Machine != me.Machine {
		return Unknown // (a machine with no machine id is known by its host name and boot id)
	}
	if o.Boot == "" || me.Boot == "" {
		return Unknown
	}
	if o.Boot != me.Boot {
		if ranHere(o.Boot) {
			return Dead // it ran before this machine's last boot
		}
		return Unknown // a boot this machine never noted: a clone's, sharing the machine id
	}
	if o.PIDNS == "" || o.PIDNS != me.PIDNS {
		return Unknown
	}
	if o.PID == me.PID && o.Start == me.Start {
		return Alive
	}
	st, err := StartTime(o.PID)
	if os.IsNotExist(err) || errors.Is(err, syscall.ESRCH) {
		// ESRCH: a process that had the pid (reused) ended while its stat was read
		return Dead
	}
	if err != nil {
		return Unknown
	}
	if st != o.Start {
		return Dead // the pid was reused by another process
	}
	return Alive
}
