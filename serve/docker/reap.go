package docker

import (
	"context"

	"github.com/docker/docker/api/types/filters"
)

// reap removes the containers of serve instances that are provably no longer running (a serve
// SIGKILLed mid-call never ran its Close), and only those: a container whose instance is alive,
// or whose liveness this serve cannot judge (another machine sharing a remote engine, another
// pid namespace, no /proc), is left alone. See instance.judge for what "provably" means.
func (e *Executor) reap(ctx context.Context) (int, error) {
	if mutated("docker-reaper") {
		return 0, nil
	}
	verdicts := map[instance]liveness{}
	return e.removeWhere(ctx, filters.NewArgs(filters.Arg("label", LabelApp)), func(l map[string]string) bool {
		o, ok := instanceFromLabels(l)
		if !ok {
			return false
		}
		v, seen := verdicts[o]
		if !seen {
			v = e.me.judge(o)
			verdicts[o] = v
			e.log.Debug("judged a serve instance that labelled containers", "instance", o.ID(), "verdict", v.String())
		}
		return v == dead
	})
}
