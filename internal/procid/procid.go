// Package procid names a running process well enough for another process, later, to tell
// whether it is still alive, and says "unknown" whenever it cannot be sure: host and machine id
// (which machine: host names repeat across machines, "ubuntu", a cloned image's), the kernel's
// boot id (a reboot ends every process), the pid namespace (a pid means something else in a
// container's or unshare's) and pid plus start time (a reused pid has another start time).
// Whatever another instance left (a container, a cloud sandbox) is removed only when it is dead.
package procid

import (
	"fmt"
	"os"
)

// Instance is one process as it labels what it makes.
type Instance struct {
	Host, Machine, Boot, PIDNS string
	PID                        int
	Start                      uint64
}

// ID is host/pid/start: unique enough for a log line, not for judging (Judge).
func (i Instance) ID() string { return fmt.Sprintf("%s/%d/%d", i.Host, i.PID, i.Start) }

// Liveness is what one instance can say about another.
type Liveness int

const (
	Unknown Liveness = iota // another machine or pid namespace, or no way to tell here: leave its things alone
	Alive
	Dead
)

func (l Liveness) String() string { return [...]string{"unknown", "alive", "dead"}[l] }

func hostname() string {
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "unknown-host"
	}
	return h
}
