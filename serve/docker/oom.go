package docker

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
