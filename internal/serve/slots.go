package serve

import (
	"context"
	"sync"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// slots is the fair scheduler of limits.max_concurrent: at most n calls run at once, and a
// free slot goes to the waiting call whose session has the fewest calls running (first come,
// first served among equals), so one session flooding serve with long calls cannot starve
// the others. When more than one session is live (HTTP), a session that already has a call
// running may not take the last free slot: a newcomer always finds one unless every slot is
// held by a distinct session. A single session (stdio) may use them all.
type slots struct {
	n int
	// live, if set, says how many sessions are live (HTTP); nil means a single session.
	live func() int

	mu      sync.Mutex
	free    int
	running map[string]int // session -> calls running
	waiting []*slotWaiter  // in arrival order
}

type slotWaiter struct {
	session string
	granted chan struct{} // closed once the slot is the waiter's
}

func newSlots(n int) *slots {
	n = max(n, 1)
	return &slots{n: n, free: n, running: map[string]int{}}
}

// acquire waits for a slot for one call of session, at most timeout (the call's own limit):
// past it the call is refused by rule limits.max_concurrent. release gives the slot back.
func (s *slots) acquire(ctx context.Context, session string, timeout time.Duration) (release func(), err error) {
	w := &slotWaiter{session: session, granted: make(chan struct{})}
	s.mu.Lock()
	s.waiting = append(s.waiting, w)
	s.dispatchLocked()
	s.mu.Unlock()
	release = func() { s.release(session) }

	wait := time.NewTimer(timeout)
	defer wait.Stop()
	select {
	case <-w.granted:
		return release, nil
	case <-wait.C:
		err = executor.Refuse("limits.max_concurrent", "all %d slots stayed busy for %s; try again later", s.n, timeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-w.granted: // granted as the wait ended: take it after all
		return release, nil
	default:
	}
	for i, o := range s.waiting {
		if o == w {
			s.waiting = append(s.waiting[:i], s.waiting[i+1:]...)
			break
		}
	}
	return nil, err
}

func (s *slots) release(session string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free++
	if s.running[session]--; s.running[session] <= 0 {
		delete(s.running, session)
	}
	s.dispatchLocked()
}

// dispatchLocked hands free slots to waiters: the one whose session runs the fewest calls
// first (the earliest among equals).
func (s *slots) dispatchLocked() {
	for s.free > 0 && len(s.waiting) > 0 {
		best := 0
		if !mutated("fair-slots") {
			for i, w := range s.waiting {
				if s.running[w.session] < s.running[s.waiting[best].session] {
					best = i
				}
			}
			w := s.waiting[best]
			if s.free == 1 && s.running[w.session] > 0 && s.live != nil && s.live() > 1 {
				// The last slot is kept for a session with nothing running; every waiter
				// already has a call running (w has the fewest).
				return
			}
		}
		w := s.waiting[best]
		s.waiting = append(s.waiting[:best], s.waiting[best+1:]...)
		s.free--
		s.running[w.session]++
		close(w.granted)
	}
}
