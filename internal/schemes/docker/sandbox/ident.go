package sandbox

import (
	"strconv"

	"github.com/mcpsandbox/mcpsandbox/internal/procid"
)

// instance identifies one running serve process, well enough for another serve on the same
// machine to tell later whether it is still alive (internal/procid: host and machine id, boot
// id, pid namespace, pid and start time), with the labels its containers carry.
type instance struct{ procid.Instance }

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
	return instance{procid.Instance{Host: l[LabelHost], Machine: l[LabelMachine], Boot: l[LabelBoot], PIDNS: l[LabelPIDNS], PID: pid, Start: start}}, true
}

// liveness is what this serve can say about another instance.
type liveness = procid.Liveness

const (
	unknown = procid.Unknown // another machine or pid namespace, or no way to tell here: leave its containers alone
	alive   = procid.Alive
	dead    = procid.Dead
)

// judge says whether the instance that labelled a container is alive, seen from me: dead only
// when sure (procid.Judge).
func (me instance) judge(o instance) liveness { return me.Judge(o.Instance) }

// judgeLocal is judge for this machine's own files (procid.JudgeLocal): an egress directory of
// another boot is an earlier boot's of this disk.
func (me instance) judgeLocal(o instance) liveness { return me.JudgeLocal(o.Instance) }
