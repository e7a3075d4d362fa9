package sandbox

import (
	"context"
	"errors"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
)

// reapTimeout bounds start-up reaping: a slow or remote engine delays serve's first call (and
// its exit) by this much at most.
const reapTimeout = 5 * time.Second

// reapAtStart removes the containers of dead serve instances first thing at start-up, and
// finishes even when serve is already shutting down: a serve whose client went away at once
// (stdin closed) still cleans up what a SIGKILLed predecessor left, because Close waits for
// the start-up probe that runs this. Bounded by reapTimeout; what it did goes to serve's log
// (stderr). An unreachable engine is left for the probe to report.
func (e *Executor) reapAtStart(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reapTimeout)
	defer cancel()
	start := time.Now()
	n, err := e.reap(ctx)
	took := time.Since(start).Round(time.Millisecond)
	switch {
	case errors.Is(err, engine.ErrUnreachable):
	case err != nil:
		e.log.Warn("could not remove every container left by serve instances that are no longer running", "err", err, "took", took)
	case n > 0:
		e.log.Info("removed containers left by serve instances that are no longer running", "count", n, "took", took)
	default:
		e.log.Debug("no containers left by dead serve instances", "took", took)
	}
}

// reap removes the containers of serve instances that are provably no longer running (a serve
// SIGKILLed mid-call never ran its Close), and only those: a container whose instance is alive,
// or whose liveness this serve cannot judge (another machine sharing a remote engine, another
// pid namespace, no /proc), is left alone. See instance.judge for what "provably" means. The
// egress socket directories of such instances go too (sweepEgressDirs).
func (e *Executor) reap(ctx context.Context) (int, error) {
	if mutated("docker-reaper") {
		return 0, nil
	}
	defer func() {
		if n := e.sweepEgressDirs(); n > 0 {
			e.log.Info("removed the egress socket directories of serve instances that are no longer running", "count", n)
		}
	}()
	verdicts := map[instance]liveness{}
	isDead := func(l map[string]string) bool {
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
	}
	n, err := e.removeWhere(ctx, filters.NewArgs(filters.Arg("label", LabelApp)), isDead)
	if err == nil && !mutated("docker-reaper-volumes") {
		err = e.removeVolumesWhere(ctx, isDead)
	}
	return n, err
}

// removeVolumesWhere removes the volumes (a writable workspace's overlay, labelled as its
// container) of dead instances that no container holds any more: a serve killed while the
// engine created its container leaves the volume without the container (whose removal takes its
// volumes with it), and nothing else ever removes it (one was found on the engine after a
// killed test run). A volume still in use is left to its container's removal.
func (e *Executor) removeVolumesWhere(ctx context.Context, remove func(labels map[string]string) bool) error {
	vs, err := e.eng.API.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", LabelApp))})
	if err != nil {
		return e.eng.Unreachable(err)
	}
	n := 0
	for _, v := range vs.Volumes {
		if v == nil || !remove(v.Labels) {
			continue
		}
		if err := e.eng.API.VolumeRemove(ctx, v.Name, false); err != nil {
			e.log.Debug("a dead serve instance's volume is not removed (still in use?)", "volume", v.Name, "err", err)
			continue
		}
		n++
	}
	if n > 0 {
		e.log.Info("removed volumes left by serve instances that are no longer running", "count", n)
	}
	return nil
}
