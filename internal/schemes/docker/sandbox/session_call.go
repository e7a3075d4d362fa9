package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// sessionCall runs one call in its session's container (docker.reuse = "session").
// tap takes the data records the supervisor writes before its end mark (the call's pictures, a
// file tool's answer); nil: a tap for the call's pictures, put in the result.
func (e *Executor) sessionCall(ctx context.Context, c executor.Call, kind, src string, reset bool, timeout time.Duration, hardStop time.Time, tap *dataTap) (*executor.Result, error) {
	s := e.session(c.Session)
	if err := e.lockSession(ctx, s, hardStop); errors.Is(err, errStartTimedOut) {
		return &executor.Result{TimedOut: true, ExitCode: 137,
			Stderr: "[mcpsandbox: the session's previous call was still running when this call's timeout ran out; the program never ran]\n"}, nil
	} else if err != nil {
		return nil, err
	}
	defer e.unlockSession(s)
	sb, note, err := e.sessionBox(ctx, s, c.Session, hardStop)
	if errors.Is(err, errStartTimedOut) {
		return &executor.Result{TimedOut: true, ExitCode: 137,
			Stderr: "[mcpsandbox: the session's container did not start within the call's timeout; the program never ran]\n"}, nil
	}
	if err != nil {
		return nil, err
	}
	sb.b.eg.setCall(executor.CallID(ctx)) // the session's calls take turns (lockSession)
	defer sb.b.eg.setCall("")
	sb.b.eg.beginNotes()
	res, err := e.runInSession(ctx, s, sb, kind, src, reset, timeout, hardStop, c.MaxOutput, tap)
	sb.b.eg.endNotes(res)
	if res != nil && note != "" {
		res.Stderr = "[mcpsandbox: " + note + "]\n" + res.Stderr
	}
	return res, err
}

// runInSession delivers one call to the session's supervisor and reads its output until the
// call's end marks (the call's own nonce), the container's end, the timeout or a cancel.
func (e *Executor) runInSession(ctx context.Context, s *dsession, sb *sessBox, kind, src string, reset bool, timeout time.Duration, hardStop time.Time, maxOut int, tap *dataTap) (*executor.Result, error) {
	if !hardStop.IsZero() {
		timeout = min(timeout, time.Until(hardStop))
	}
	cn := randHex(16)
	out, errb := &executor.CapBuffer{Limit: maxOut}, &executor.CapBuffer{Limit: maxOut}
	marked := make(chan struct{}, 2)
	onMark := func() { marked <- struct{}{} }
	om, em := newMarkWriter(out, cn, onMark), newMarkWriter(errb, cn, onMark)
	pictures := tap == nil
	if pictures {
		tap = newDataTap(om, cn, imageBudget)
	} else {
		tap.retarget(om, cn)
	}
	sb.route(tap, em)
	start := time.Now()
	res := &executor.Result{}
	finish := func(note string) *executor.Result {
		sb.route(nil, nil)
		tap.flush()
		om.flush()
		em.flush()
		res.Stdout, res.Stderr = out.String(), errb.String()
		if note != "" {
			if res.Stderr != "" && !strings.HasSuffix(res.Stderr, "\n") {
				res.Stderr += "\n"
			}
			res.Stderr += "[mcpsandbox: " + note + "]\n"
		}
		res.Truncated = out.Dropped() > 0 || errb.Dropped() > 0
		res.DurationMS = time.Since(start).Milliseconds()
		if pictures {
			addImages(res, tap)
		}
		return res
	}
	r := "0"
	if reset {
		r = "1"
	}
	delivered := make(chan error, 1)
	go func() {
		_, err := io.WriteString(sb.b.hj.Conn, fmt.Sprintf("call %s %s %s %d\n%s", kind, cn, r, len(src), src))
		delivered <- err
	}()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for marks := 0; ; {
		select {
		case err := <-delivered:
			delivered = nil
			if err != nil {
				e.retire(s, sb, "the session's container stopped taking programs; this call runs in a fresh one: variables and files of earlier calls are gone")
				finish("")
				return nil, fmt.Errorf("%w: %v", errDelivery, err)
			}
		case <-marked:
			if marks++; marks < 2 {
				continue
			}
			_, st, oom := em.result()
			res.ExitCode = st
			note := ""
			if oom > sb.oomSeen {
				sb.oomSeen = oom
				if e.markOOM(sb.b.id, 1) {
					note = fmt.Sprintf("killed: out of memory (limits.memory = %s)", e.memText)
				}
			}
			return finish(note), nil
		case <-sb.end:
			return e.sessionEnded(ctx, s, sb, res, finish, timer.C, hardStop)
		case <-timer.C:
			return e.sessionTimedOut(s, sb, res, finish, timeout), nil
		case <-ctx.Done():
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				return e.sessionTimedOut(s, sb, res, finish, timeout), nil
			}
			e.retire(s, sb, "the session's previous call was cancelled: its container was removed with everything the call had started; "+
				"this call runs in a fresh one: variables, files and processes of earlier calls are gone")
			finish("")
			return nil, ctx.Err()
		}
	}
}

// sessionTimedOut: the call overran its timeout; the session's container goes with everything
// in it (see sessionState for why the container, not only the program).
func (e *Executor) sessionTimedOut(s *dsession, sb *sessBox, res *executor.Result, finish func(string) *executor.Result, timeout time.Duration) *executor.Result {
	d := policy.Duration{Duration: timeout.Round(time.Millisecond)}
	if !mutated("docker-session-timeout") {
		e.retire(s, sb, fmt.Sprintf("the session's previous call timed out after %s: its container was removed with everything the call had started; "+
			"this call runs in a fresh one: variables, files and processes of earlier calls are gone", d))
	}
	res.TimedOut, res.ExitCode = true, 137
	return finish(fmt.Sprintf("timed out after %s: the session's container was removed with everything in it; the session's next call starts in a fresh one", d))
}

// sessionEnded: the container stopped during the call (the program killed the supervisor, the
// memory limit, docker kill): its exit status decides, and the session's next call gets a fresh
// container.
func (e *Executor) sessionEnded(ctx context.Context, s *dsession, sb *sessBox, res *executor.Result, finish func(string) *executor.Result, timeout <-chan time.Time, hardStop time.Time) (*executor.Result, error) {
	const lost = "; the session's next call starts in a fresh container: variables and files of earlier calls are gone"
	if sb.dropped.Load() { // serve removed it: the session ended, or serve is shutting down
		res.ExitCode = 137
		return finish("the session's container was removed during the call (the session ended, or serve is shutting down)"), nil
	}
	e.retire(s, sb, "the session's container ended during the previous call; this call runs in a fresh one: variables and files of earlier calls are gone")
	code, oom, err := e.exitStatus(ctx, sb.b, timeout, hardStop)
	switch {
	case errors.Is(err, errTimedOut):
		res.TimedOut, res.ExitCode = true, 137
		return finish("timed out" + lost), nil
	case err != nil && ctx.Err() != nil:
		finish("")
		return nil, ctx.Err()
	case err != nil:
		res.ExitCode = 137
		return finish(fmt.Sprintf("the session's container ended during the call and the engine did not say how (%v)", err) + lost), nil
	}
	res.ExitCode = code
	if oom {
		return finish(fmt.Sprintf("killed: out of memory (limits.memory = %s)", e.memText) + lost), nil
	}
	return finish(fmt.Sprintf("the session's container ended during the call (status %d)", code) + lost), nil
}
