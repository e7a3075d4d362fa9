package sandbox

import (
	"fmt"
	"os"
	"strconv"
)

// instance identifies one running serve process, well enough for another serve on the same
// machine to tell later whether it is still alive: host and machine id (which machine), kernel
// boot id (a reboot ends every process), pid namespace (pids are per namespace) and pid plus
// the process's start time (a reused pid has another start time).
type instance struct {
	Host, Machine, Boot, PIDNS string
	PID                        int
	Start                      uint64
}

func (i instance) ID() string { return fmt.Sprintf("%s/%d/%d", i.Host, i.PID, i.Start) }

func (i instance) labels() map[string]string {
	return map[string]string{
		LabelApp: "1", LabelInstance: i.ID(), LabelHost: i.Host, LabelMachine: i.Machine, LabelBoot: i.Boot,
		LabelPIDNS: i.PIDNS, LabelPID: strconv.Itoa(i.PID), LabelStart: strconv.FormatUint(i.Start, 10),
	}
}

func instanceFromLabels(l map[string]string) (instance, bool) {
	pid, err1 := strconv.Atoi(l[LabelPID])
	start, err2 := strconv.ParseUint(l[LabelStart], 10, 64)
	if err1 != nil || err2 != nil || l[LabelHost] == "" {
		return instance{}, false
	}
	return instance{Host: l[LabelHost], Machine: l[LabelMachine], Boot: l[LabelBoot], PIDNS: l[LabelPIDNS], PID: pid, Start: start}, true
}

// liveness is what this serve can say about another instance.
type liveness int

const (
	unknown liveness = iota // another machine or pid namespace, or no way to tell here: leave its containers alone
	alive
	dead
)

func (l liveness) String() string {
	return [...]string{"unknown", "alive", "dead"}[l]
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown-host"
	}
	return h
}
