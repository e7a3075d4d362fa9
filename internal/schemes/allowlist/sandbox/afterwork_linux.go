//go:build linux

package sandbox

import (
	"sync"
	"time"
)

// afterAnswerMax is how long the work a call leaves for after its answer waits when no answer
// is reported (AfterAnswer): an executor driven by something other than serve, or an answer
// still being written.
const afterAnswerMax = 2 * time.Millisecond

// afterWork holds the work calls leave for after their answers: the next call's namespaces,
// mount namespace and layer made ahead, a finished call's namespaces let go (their teardown is
// the kernel's work in the closing thread). Started as the command exited, it ran on the other
// CPU of a 2-CPU host beside the call's own end: the output read, the commit, the audit entry and
// the answer (docs/perf-allowlist.md, twelfth round).
type afterWork struct {
	mu  sync.Mutex
	fs  []func()
	t   *time.Timer
	max time.Duration // 0: afterAnswerMax (tests set it)
}

// later queues f until the next answer is out, or afterAnswerMax.
func (w *afterWork) later(f func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fs = append(w.fs, f)
	if w.t == nil {
		wait := w.max
		if wait == 0 {
			wait = afterAnswerMax
		}
		w.t = time.AfterFunc(wait, w.now)
	}
}

// now starts the queued work, in order, on a goroutine of its own.
func (w *afterWork) now() {
	if fs := w.take(); len(fs) > 0 {
		go func() {
			for _, f := range fs {
				f()
			}
		}()
	}
}

// drain runs the queued work here (Close: what calls let go is let go before it returns; what
// they would prepare sees the executor closed and makes nothing).
func (w *afterWork) drain() {
	for _, f := range w.take() {
		f()
	}
}

func (w *afterWork) take() []func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	fs := w.fs
	w.fs = nil
	if w.t != nil {
		w.t.Stop()
		w.t = nil
	}
	return fs
}

// AfterAnswer is serve's word that a call's answer has been written: the work calls left for
// after their answers starts now.
func (e *Executor) AfterAnswer() { e.after.now() }
