package sandbox

import (
	"sync"
	"time"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
)

// oomWatch follows the engine's "oom" events for this instance's containers. The engine's
// own State.OOMKilled is not enough: Engine 20.10 sets it only when containerd's OOM event
// arrives before the task's exit event, which is a race the kernel often wins the other way.
type oomWatch struct {
	mu   sync.Mutex
	seen map[string]bool
	wake chan struct{} // closed and replaced on every event
}

func (e *Executor) watchOOM() {
	w := &oomWatch{seen: map[string]bool{}, wake: make(chan struct{})}
	e.oom = w
	ready := make(chan struct{})
	go func() {
		f := filters.NewArgs(filters.Arg("type", "container"), filters.Arg("event", "oom"), filters.Arg("label", LabelInstance+"="+e.me.ID()))
		first := true
		defer func() {
			// serve closed before the first subscription (a client that connects and leaves at
			// once): the probe waiting below must still go on, or Close waits for it forever
			if first && !mutated("docker-oom-ready") {
				close(ready)
			}
		}()
		for e.life.Err() == nil {
			msgs, errs := e.eng.API.Events(e.life, events.ListOptions{Filters: f})
			if first {
				close(ready)
				first = false
			}
		loop:
			for {
				select {
				case m := <-msgs:
					w.mu.Lock()
					w.seen[m.Actor.ID] = true
					close(w.wake)
					w.wake = make(chan struct{})
					w.mu.Unlock()
				case <-errs:
					break loop
				}
			}
			select {
			case <-e.life.Done():
			case <-time.After(time.Second):
			}
		}
	}()
	<-ready
}

// killed says whether the container was OOM-killed, waiting up to wait for the event.
func (w *oomWatch) killed(id string, wait time.Duration) bool {
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for {
		w.mu.Lock()
		seen, wake := w.seen[id], w.wake
		w.mu.Unlock()
		if seen {
			return true
		}
		select {
		case <-wake:
		case <-deadline.C:
			return false
		}
	}
}

func (w *oomWatch) forget(id string) {
	w.mu.Lock()
	delete(w.seen, id)
	w.mu.Unlock()
}

// oomConfirmWait bounds how long a call whose end mark claims an OOM kill waits for the engine's
// event that confirms it. The wrapper writes the mark after it read the kill in its cgroup, so a
// real event is already on its way; a forged claim costs only its own call this wait.
const oomConfirmWait = time.Second

// markOOM says whether a call that ended with its end mark was OOM-killed (a process of the
// program, not the wrapper). Only the engine may say so: the mark's count comes from inside the
// container, where the program can print a mark of its own (the nonce is in its argv), so it
// only decides how long to wait for the engine's oom event, never the answer.
func (e *Executor) markOOM(id string, claimed int) bool {
	if mutated("docker-oom-from-engine") {
		return claimed > 0 // the mark's word taken as the engine's
	}
	if e.oom == nil {
		return false
	}
	wait := time.Duration(0) // no claim: only an event already seen
	if claimed > 0 {
		wait = oomConfirmWait
	}
	return e.oom.killed(id, wait)
}
