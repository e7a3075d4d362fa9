//go:build !linux

package sandbox

import "os"

// self on macOS and Windows: no /proc to prove a process's start time, so no instance is ever
// judged dead from here (see judge); containers of a SIGKILLed serve stay until removed by
// hand (docker rm -f $(docker ps -aq --filter label=dev.mcpsandbox)).
func self() instance { return instance{Host: hostname(), PID: os.Getpid()} }

func (me instance) judge(o instance) liveness {
	if o.Host == me.Host && o.PID == me.PID && o.Start == me.Start {
		return alive
	}
	return unknown
}
