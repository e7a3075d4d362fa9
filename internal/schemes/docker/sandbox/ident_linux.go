package sandbox

import "github.com/mcpsandbox/mcpsandbox/internal/procid"

func self() instance { return instance{procid.Self()} }

// startTime is field 22 of /proc/PID/stat: the process's start, in clock ticks since boot.
var startTime = procid.StartTime
