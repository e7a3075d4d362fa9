//go:build !linux

package procid

import "os"

// Self on macOS and Windows: no /proc to prove a process's start time, so no instance is ever
// judged dead from here (Judge).
func Self() Instance { return Instance{Host: hostname(), PID: os.Getpid()} }

// StartTime is not known here.
func StartTime(pid int) (uint64, error) { return 0, os.ErrNotExist }

// Judge: only this very process is known alive; anything else is unknown.
func (me Instance) Judge(o Instance) Liveness {
	if o.Host == me.Host && o.PID == me.PID && o.Start == me.Start {
		return Alive
	}
	return Unknown
}

// JudgeLocal: as Judge.
func (me Instance) JudgeLocal(o Instance) Liveness { return me.Judge(o) }
