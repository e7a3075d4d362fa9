package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/pkg/stdcopy"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Sessions (docker.reuse = "session"): one container per MCP session, built like any other
// (spec.go: the same hardening and limits), taken from the pool when one is ready, and turned
// into the session's supervisor (sessionPy) at the session's first call. Calls of the session
// run in it one at a time: Python in one long-lived interpreter, shell scripts in /bin/sh, both
// seeing the files the session's earlier calls left in /tmp.
//
// A session's container is removed when the session ends (EndSession: stdio EOF, an HTTP
// DELETE, serve's own idle expiry of the session), after docker.session_idle without a call
// (the session's next call then runs in a fresh container and is told so), at shutdown (Close),
// and, like every container, by the next serve when this one was killed (its labels name this
// instance; reap.go). docker.max_sessions bounds the session containers the engine holds at
// once, a removed one counted until the engine says it is gone: a new session's first call past
// it has the least recently used idle session's container removed, once that session's last call
// ended sessionKeep ago (waiting for that within placeWait), and waits for it to go, or is
// refused, naming the key. A session gets its container at its first call, not at its start.
//
// A call that overruns its timeout (or is cancelled) has the session's whole container removed,
// not only its program: limits.timeout bounds everything a call starts, and only removing the
// container surely ends what a program detached (setsid, a double fork, a process that ignores
// signals), which a kept container would let run on past the timeout, holding the session's
// memory and pids. The session's next call runs in a fresh container and its result says what
// happened (variables and files of earlier calls are gone). A Python interpreter that dies
// during a call (os._exit, a segfault) is restarted inside the same container: its files stay.
type sessionState struct {
	mu   sync.Mutex
	m    map[string]*dsession
	live int // session containers alive or being started
	// removing: session containers whose removal started and has not ended (the engine still
	// holds them); live + removing is at most docker.max_sessions (attack round atk34b, N1)
	removing int
	freed    chan struct{} // closed when a place frees, for the starts waiting for one
	seq      uint64        // claims made so far: orders claims of the same time (dsession.claimSeq)
}

// held is how many places under docker.max_sessions are taken. With mu held.
func (st *sessionState) held() int { return st.live + st.removing }

// wake tells the starts waiting for a place that one may have freed. With mu held.
func (st *sessionState) wake() {
	if st.freed != nil {
		close(st.freed)
		st.freed = nil
	}
}

// placeWait bounds how long a new session's start waits for a removed container's place, or
// for an idle session's container to pass sessionKeep.
var placeWait = 20 * time.Second

// sessionKeep is how long a session's container is kept after its last call ended before
// another session may take its place under docker.max_sessions. Without it a newcomer took the
// container of a session idle for 0.1 s: a client between two back-to-back calls lost its
// variables (trial40 F5). 30 s is longer than a model's turn between two calls of a working
// client, and short enough that a session its client left without a DELETE (a one-shot client
// such as the MCP Inspector CLI) gives way soon rather than after docker.session_idle.
var sessionKeep = 30 * time.Second

// claimGrace is how long a place is reserved for a waiting session whose claim has come (the
// earliest such claim first): no other session may take it meanwhile. Without it the place went
// to whichever session's call came first at that time, and one client with two sessions, each
// calling a second before the time, took every turn from a newcomer obeying "try again in Ns"
// (atk42 F6). Long enough for a client told the time (rounded down) to come back; short, as a
// claim its client abandoned holds the place that long.
var claimGrace = 10 * time.Second

// dsession is one MCP session's container, if it has one.
type dsession struct {
	lock  chan struct{} // held by the session's running call
	sb    *sessBox      // guarded by sessionState.mu, as are the fields below
	note  string        // what the session's next call is told (its container was removed)
	idle  *time.Timer
	ended bool
	used  time.Time // when its last call ended: the least recently used idle one gives way first
	// claim: when this session, waiting for a place, was told one frees (the least recently used
	// idle session's keep then); that session's later calls do not push it back (keepLeft)
	claim    time.Time
	claimSeq uint64    // when the claim was first made, among all claims (sessionState.seq)
	since    time.Time // when it got its container
}

// sessBox is a session's container once its supervisor runs: the attach stream is read for the
// container's whole life and routed to the running call's capped buffers (nil between calls:
// what a background process writes then is dropped).
type sessBox struct {
	b        *box
	mu       sync.Mutex
	out, err io.Writer
	end      chan struct{} // the attach stream ended: the container stopped or was removed
	oomSeen  int
	dropOnce sync.Once
	dropped  atomic.Bool // serve removes it (session end, idle, Close, a broken call)
}

type routeWriter struct {
	sb     *sessBox
	stderr bool
}

func (w routeWriter) Write(p []byte) (int, error) {
	w.sb.mu.Lock()
	defer w.sb.mu.Unlock()
	dst := w.sb.out
	if w.stderr {
		dst = w.sb.err
	}
	if dst != nil {
		dst.Write(p)
	}
	return len(p), nil
}

// stopped says the container's attach stream ended (the container stopped or is gone).
func (sb *sessBox) stopped() bool {
	select {
	case <-sb.end:
		return true
	default:
		return false
	}
}

func (sb *sessBox) route(out, err io.Writer) {
	sb.mu.Lock()
	sb.out, sb.err = out, err
	sb.mu.Unlock()
}

// sessionKey is the key a call's session is kept under.
func sessionKey(id string) string {
	if mutated("docker-session-shared") {
		return "shared"
	}
	return id
}

// session returns the call's session, made at its first call.
func (e *Executor) session(id string) *dsession {
	e.sess.mu.Lock()
	defer e.sess.mu.Unlock()
	if e.sess.m == nil {
		e.sess.m = map[string]*dsession{}
	}
	s := e.sess.m[sessionKey(id)]
	if s == nil {
		s = &dsession{lock: make(chan struct{}, 1)}
		e.sess.m[sessionKey(id)] = s
	}
	return s
}

// lockSession waits for the session's running call, bounded by the call's hard stop and its
// cancellation, and stops the idle clock.
func (e *Executor) lockSession(ctx context.Context, s *dsession, hardStop time.Time) error {
	var stop <-chan time.Time
	if !hardStop.IsZero() {
		t := time.NewTimer(time.Until(hardStop))
		defer t.Stop()
		stop = t.C
	}
	select {
	case s.lock <- struct{}{}:
	case <-stop:
		return errStartTimedOut
	case <-ctx.Done():
		return ctx.Err()
	}
	e.sess.mu.Lock()
	if s.idle != nil {
		s.idle.Stop()
	}
	e.sess.mu.Unlock()
	return nil
}

// unlockSession ends a call's hold and restarts the idle clock (docker.session_idle).
func (e *Executor) unlockSession(s *dsession) {
	e.sess.mu.Lock()
	if s.sb != nil && !s.ended {
		if s.idle != nil {
			s.idle.Stop()
		}
		s.idle = time.AfterFunc(dksec.Of(e.pol).Idle(), func() { e.expire(s) })
	}
	s.used = time.Now()
	e.sess.mu.Unlock()
	<-s.lock
}

// evictIdle makes room under docker.max_sessions for another session's container: the
// container of the session whose last call ended longest ago, among those with no call running,
// is removed (the caller waited for its sessionKeep: keepLeft), and that session's next call runs in a fresh one and is told why; as the HTTP
// layer closes the least recently used idle session past limits.max_sessions. Sessions a client
// abandoned (an HTTP client that quit without a DELETE) otherwise held every place until
// docker.session_idle, renewed by one call each (attack round atk34, F1). Called with e.sess.mu
// held, which it releases; false when every session with a container is running a call.
func (e *Executor) evictIdle(self *dsession) bool {
	victim := e.lruIdle(self)
	if victim == nil || mutated("docker-session-no-evict") {
		e.sess.mu.Unlock()
		return false
	}
	select {
	case victim.lock <- struct{}{}: // no call of its own can start while its container goes
	default:
		e.sess.mu.Unlock()
		return true // a call of its own just started: look again
	}
	sb := victim.sb
	victim.sb = nil
	victim.note = fmt.Sprintf("this session's container was removed after %s without a call, to make room for another session's (docker.max_sessions = %d); "+
		"this call runs in a fresh one: variables, files and processes of earlier calls are gone",
		time.Since(victim.used).Round(time.Second), dksec.Of(e.pol).SessionCap())
	if victim.idle != nil {
		victim.idle.Stop()
	}
	e.sess.mu.Unlock()
	e.log.Info("removing the least recently used idle session's container for another session", "container", sb.b.id[:12], "cap", dksec.Of(e.pol).SessionCap())
	// its place frees once the engine removed it (dropBox): the caller waits for that
	e.dropBox(sb)
	<-victim.lock
	return true
}

// lruIdle is the session with a container whose last call ended longest ago, among those with
// no call running (nil if none). With e.sess.mu held.
func (e *Executor) lruIdle(self *dsession) *dsession {
	var victim *dsession
	for _, o := range e.sess.m {
		if o != self && o.sb != nil && !o.ended && (victim == nil || o.used.Before(victim.used)) && len(o.lock) == 0 {
			victim = o
		}
	}
	return victim
}

// keepLeft is how long until the least recently used idle session may give way (sessionKeep
// after its last call), 0 when it may now or no session is idle. With e.sess.mu held.
//
// What self is told to wait for is its claim: an idle session's later calls renew its keep
// against newcomers that come later, not against self, which gets a place at its claim (from
// the least recently used session idle then) if it waits or comes back within sessionKeep after
// it. A session that got its place after the claim keeps it sessionKeep from then, so waiting
// sessions take turns. Without the claim one client held every place for ever with one trivial
// call per session every 25 s, and a newcomer's wait and "try again in Ns" never came true
// (atk41 F7). A claim not taken up within sessionKeep lapses. A place that may go now is still
// withheld from self while it is reserved for earlier claims come due (reservedUntil).
func (e *Executor) keepLeft(self *dsession) time.Duration {
	v := e.lruIdle(self)
	if v == nil || mutated("docker-session-evict-min-idle") {
		return 0
	}
	now := time.Now()
	until := v.used.Add(sessionKeep)
	if mutated("docker-session-keep-fair") {
		return max(0, until.Sub(now))
	}
	if !self.claim.IsZero() && now.After(self.claim.Add(sessionKeep)) {
		self.claim = time.Time{} // lapsed: its client did not come back for it
	}
	if !self.claim.IsZero() {
		by := self.claim
		if t := v.since.Add(sessionKeep); t.After(by) && !mutated("docker-session-claim-turns") {
			by = t
		}
		if by.Before(until) {
			until = by
		}
	}
	if !until.After(now) {
		r := e.reservedUntil(self, now, max(1, e.idlePast(self, now)))
		if r.IsZero() {
			return 0
		}
		if self.claim.IsZero() {
			e.setClaim(self, r)
		}
		return r.Sub(now)
	}
	e.setClaim(self, until)
	return until.Sub(now)
}

// setClaim sets self's claim; a first claim gets its place in the order of claims. With
// e.sess.mu held.
func (e *Executor) setClaim(self *dsession, t time.Time) {
	if self.claim.IsZero() {
		e.sess.seq++
		self.claimSeq = e.sess.seq
	}
	self.claim = t
}

// claimBefore says o's claim comes before self's: an earlier time, or the same time claimed
// first. A session with no claim comes after every claim.
func claimBefore(o, self *dsession) bool {
	if self.claim.IsZero() {
		return true
	}
	return o.claim.Before(self.claim) || (o.claim.Equal(self.claim) && o.claimSeq < self.claimSeq)
}

// reservedUntil is when self may take one of free places (free at least 1) that are reserved
// for claims before self's come due within claimGrace and not yet taken up (zero: self may now).
// The claims are ordered by their time, not by when they were made, so a claim is withheld only
// by claims due no later than itself, each for at most claimGrace: a client cannot push a
// newcomer's turn back by making claims meanwhile. With e.sess.mu held.
func (e *Executor) reservedUntil(self *dsession, now time.Time, free int) time.Time {
	if mutated("docker-session-claim-queue") {
		return time.Time{}
	}
	var ends []time.Time
	for _, o := range e.sess.m {
		end := o.claim.Add(claimGrace)
		if o == self || o.ended || o.sb != nil || o.claim.IsZero() || o.claim.After(now) || !end.After(now) || !claimBefore(o, self) {
			continue
		}
		ends = append(ends, end)
	}
	if len(ends) < free {
		return time.Time{}
	}
	slices.SortFunc(ends, time.Time.Compare)
	return ends[len(ends)-free] // enough of them lapsed to leave self a place
}

// idlePast is how many sessions other than self have a container, no call running, and their
// last call ended sessionKeep ago or more: places a claim may take now. With e.sess.mu held.
func (e *Executor) idlePast(self *dsession, now time.Time) int {
	n := 0
	for _, o := range e.sess.m {
		if o != self && o.sb != nil && !o.ended && len(o.lock) == 0 && !o.used.Add(sessionKeep).After(now) {
			n++
		}
	}
	return n
}

// awaitKeep waits (e.sess.mu held, released meanwhile) for left, until the least recently used
// idle session's container may give way, or for a place freeing meanwhile; when left would pass
// *by (placeWait from the first wait) or the call's hard stop, the call is refused at once,
// saying when to try again. On an error e.sess.mu is released.
func (e *Executor) awaitKeep(ctx context.Context, by *time.Time, hardStop time.Time, left time.Duration, max int) error {
	now := time.Now()
	if by.IsZero() {
		*by = now.Add(placeWait)
	}
	if until := now.Add(left); until.After(*by) || (!hardStop.IsZero() && until.After(hardStop)) {
		live := e.sess.live
		e.sess.mu.Unlock()
		return executor.Refuse("docker.max_sessions", "%d sessions already have a container (docker.max_sessions = %d), each running a call or used within the last %s "+
			"(a session's container is kept %s after its last call, so a client between two calls keeps its state): try again in %s "+
			"(the least recently used idle session's container gives way to this session then, its later calls notwithstanding), "+
			"raise docker.max_sessions, or have clients end their sessions when done (an HTTP DELETE; a client that never sends one keeps its place until a new session needs it %s after its last call, or docker.session_idle)",
			live, max, sessionKeep, sessionKeep, tryAgainIn(left), sessionKeep)
	}
	t := time.NewTimer(left)
	defer t.Stop()
	if e.sess.freed == nil {
		e.sess.freed = make(chan struct{})
	}
	freed := e.sess.freed
	e.sess.mu.Unlock()
	select {
	case <-freed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	e.sess.mu.Lock()
	return nil
}

// tryAgainIn is the "try again in" a refused session is told for a wait of left: rounded down
// (at least 1 s), so a client that obeys it comes back on time, a little early at most, and its
// call waits the rest (awaitKeep, within placeWait). Rounded up, an obeying client always came
// after a client calling a second early (atk42 F6).
func tryAgainIn(left time.Duration) time.Duration {
	if mutated("docker-session-try-again-up") {
		return left.Truncate(time.Second) + time.Second
	}
	return max(time.Second, left.Truncate(time.Second))
}

// expire removes an idle session's container; a call running meanwhile restarts the clock.
func (e *Executor) expire(s *dsession) {
	if mutated("docker-session-idle") {
		return
	}
	select {
	case s.lock <- struct{}{}:
	default:
		return
	}
	defer func() { <-s.lock }()
	e.sess.mu.Lock()
	sb := s.sb
	if sb != nil {
		s.sb = nil
		s.note = fmt.Sprintf("this session's container was removed after docker.session_idle = %s without a call; this call runs in a fresh one: "+
			"variables, files and processes of earlier calls are gone", policy.Duration{Duration: dksec.Of(e.pol).Idle()})
	}
	e.sess.mu.Unlock()
	if sb != nil {
		e.log.Info("removed an idle session's container", "container", sb.b.id[:12], "idle", dksec.Of(e.pol).Idle())
		e.dropBox(sb)
	}
}

// retire detaches sb from its session (the session's next call gets a fresh container, told
// note) and removes it.
func (e *Executor) retire(s *dsession, sb *sessBox, note string) {
	e.sess.mu.Lock()
	if s.sb == sb {
		s.sb, s.note = nil, note
	}
	e.sess.mu.Unlock()
	e.dropBox(sb)
}

// holdStarting counts b, a container started for a session (reuse = "session", not the pool's)
// that failed to start or whose start the call gave up, as held until the engine removed it
// (holdRemoval), as a session's own.
func (e *Executor) holdStarting(b *box) {
	if b != nil && !b.pooled && dksec.Of(e.pol).Sessions() {
		e.holdRemoval(b)
	}
}

// dropBox removes a session's container; its place under docker.max_sessions frees once the
// engine removed it (holdRemoval).
func (e *Executor) dropBox(sb *sessBox) {
	sb.dropOnce.Do(func() {
		sb.dropped.Store(true)
		if sb.b.gone == nil {
			sb.b.gone = make(chan struct{})
		}
		e.destroy(sb.b)
		e.holdRemoval(sb.b)
		e.sess.mu.Lock()
		e.sess.live--
		e.sess.wake()
		e.sess.mu.Unlock()
	})
}

// holdRemoval counts b, a session's container whose removal started (destroy), as held until
// the engine removed it: removal runs off the call's path, and the count dropping as it started
// let other sessions' starts have the engine hold more than docker.max_sessions meanwhile.
func (e *Executor) holdRemoval(b *box) {
	if b.gone == nil || mutated("docker-session-removal-uncounted") {
		return
	}
	e.sess.mu.Lock()
	e.sess.removing++
	e.sess.mu.Unlock()
	go func() {
		<-b.gone // closed when the removal ended, also a failed one (logged, left to reap)
		e.sess.mu.Lock()
		e.sess.removing--
		e.sess.wake()
		e.sess.mu.Unlock()
	}()
}

// EndSession implements executor.SessionEnder: the session's container is removed.
func (e *Executor) EndSession(id string) {
	e.sess.mu.Lock()
	s := e.sess.m[sessionKey(id)]
	if s == nil || mutated("docker-session-end") {
		e.sess.mu.Unlock()
		return
	}
	delete(e.sess.m, sessionKey(id))
	s.ended = true
	sb := s.sb
	s.sb = nil
	if s.idle != nil {
		s.idle.Stop()
	}
	e.sess.mu.Unlock()
	if sb != nil {
		e.dropBox(sb)
	}
}

// closeSessions removes every session's container (Close).
func (e *Executor) closeSessions() {
	e.sess.mu.Lock()
	var sbs []*sessBox
	for _, s := range e.sess.m {
		s.ended = true
		if s.sb != nil {
			sbs = append(sbs, s.sb)
			s.sb = nil
		}
		if s.idle != nil {
			s.idle.Stop()
		}
	}
	e.sess.m = nil
	e.sess.mu.Unlock()
	for _, sb := range sbs {
		e.dropBox(sb)
	}
}

// SessionContainers is how many session containers are alive or starting (tests, bench).
func (e *Executor) SessionContainers() int {
	e.sess.mu.Lock()
	defer e.sess.mu.Unlock()
	return e.sess.live
}

// sessionBox returns the session's container, starting one (from the pool if one is ready)
// under docker.max_sessions; note is what the call must be told about the session's earlier
// container.
func (e *Executor) sessionBox(ctx context.Context, s *dsession, id string, hardStop time.Time) (*sessBox, string, error) {
	e.sess.mu.Lock()
	if sb := s.sb; sb != nil && sb.stopped() {
		// Stopped between calls: docker stop/kill, or a process the session left running ended
		// its supervisor. The session's calls go on in a fresh container, told so.
		s.sb = nil
		e.sess.mu.Unlock()
		e.dropBox(sb)
		e.sess.mu.Lock()
		if s.note == "" {
			s.note = "the session's container stopped after its previous call (stopped from outside, or a process the session left running ended it); " +
				"this call runs in a fresh one: variables, files and processes of earlier calls are gone"
		}
	}
	if s.ended {
		e.sess.mu.Unlock()
		return nil, "", errors.New("the MCP session ended")
	}
	note := s.note // cleared once the call has a container: a refused call leaves it for the next
	if s.sb != nil {
		sb := s.sb
		s.note = ""
		e.sess.mu.Unlock()
		return sb, note, nil
	}
	max := dksec.Of(e.pol).SessionCap()
	var waited <-chan time.Time
	var keepBy time.Time
	for tries := 0; !mutated("docker-session-cap"); {
		if held := e.sess.held(); held < max {
			// a free place, unless it is reserved for earlier claims come due
			r := e.reservedUntil(s, time.Now(), max-held)
			if r.IsZero() {
				break
			}
			if err := e.awaitKeep(ctx, &keepBy, hardStop, time.Until(r), max); err != nil {
				return nil, "", err
			}
			continue
		}
		if e.sess.removing == 0 {
			if left := e.keepLeft(s); left > 0 {
				// the least recently used idle session's last call ended under sessionKeep ago
				if err := e.awaitKeep(ctx, &keepBy, hardStop, left, max); err != nil {
					return nil, "", err
				}
				continue
			}
			live := e.sess.live
			if tries == 8 || !e.evictIdle(s) { // evictIdle releases e.sess.mu
				if tries == 8 {
					e.sess.mu.Unlock()
				}
				return nil, "", executor.Refuse("docker.max_sessions", "%d sessions already have a container (docker.max_sessions = %d), each running a call: "+
					"try again when one ends, or raise docker.max_sessions", live, max)
			}
			tries++
			e.sess.mu.Lock()
			continue
		}
		// A container is being removed: its place is free once the engine removed it.
		if err := e.awaitPlace(ctx, &waited, hardStop, max); err != nil {
			return nil, "", err
		}
	}
	e.sess.live++
	s.claim = time.Time{} // taken up: the place it reserved is this start's
	e.sess.mu.Unlock()
	sb, err := e.startSessionBox(ctx, id, hardStop)
	if err != nil {
		e.sess.mu.Lock()
		e.sess.live--
		e.sess.mu.Unlock()
		return nil, "", err
	}
	e.sess.mu.Lock()
	if s.ended || e.life.Err() != nil {
		e.sess.mu.Unlock()
		e.dropBox(sb)
		return nil, "", errors.New("the MCP session ended while its container started")
	}
	s.sb, s.note, s.since = sb, "", time.Now()
	e.sess.mu.Unlock()
	return sb, note, nil
}

// awaitPlace waits (e.sess.mu held, released meanwhile) until a place under docker.max_sessions
// may have freed, bounded by placeWait from the first wait (*waited), the call's hard stop and
// its cancellation. On an error e.sess.mu is released.
func (e *Executor) awaitPlace(ctx context.Context, waited *<-chan time.Time, hardStop time.Time, max int) error {
	if *waited == nil {
		*waited = time.After(placeWait)
	}
	var stop <-chan time.Time
	if !hardStop.IsZero() {
		t := time.NewTimer(time.Until(hardStop))
		defer t.Stop()
		stop = t.C
	}
	if e.sess.freed == nil {
		e.sess.freed = make(chan struct{})
	}
	freed, removing := e.sess.freed, e.sess.removing
	e.sess.mu.Unlock()
	select {
	case <-freed:
		e.sess.mu.Lock()
		return nil
	case <-*waited:
		return executor.Refuse("docker.max_sessions", "%d session containers are still being removed by the engine after %s, and the others are in use (docker.max_sessions = %d): "+
			"try again, or raise docker.max_sessions", removing, placeWait, max)
	case <-stop:
		return errStartTimedOut
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startSessionBox takes a pooled container or starts one, and turns its wrapper into the
// session's supervisor.
func (e *Executor) startSessionBox(ctx context.Context, id string, hardStop time.Time) (*sessBox, error) {
	var b *box
	if e.pool != nil {
		if b = e.takeFresh(); b != nil {
			defer e.pool.release() // the replacement starts once this container serves the session
			if err := e.becomeSession(b); err != nil {
				e.log.Warn("a pooled container did not become the session's; starting a fresh one", "err", err)
				e.destroy(b)
				e.holdRemoval(b)
				b = nil
			}
		}
	}
	if b == nil {
		var err error
		if b, err = e.newBoxBy(ctx, hardStop); err != nil {
			return nil, err
		}
		if err := e.becomeSession(b); err != nil {
			e.destroy(b)
			e.holdRemoval(b) // counted until gone, as dropBox's
			return nil, err
		}
	}
	b.eg.setSession(id)
	b.eg.markShared()
	sb := &sessBox{b: b, end: make(chan struct{})}
	go func() {
		defer close(sb.end)
		_, _ = stdcopy.StdCopy(routeWriter{sb, false}, routeWriter{sb, true}, b.hj.Reader)
	}()
	return sb, nil
}

// becomeSession delivers the supervisor and waits until its interpreter is started.
func (e *Executor) becomeSession(b *box) error {
	b.hj.Conn.SetWriteDeadline(time.Now().Add(engineOpTimeout))
	src := programMutants(sessionPy)
	if mutated("docker-session-repl-isolated") {
		src = strings.Replace(src, isolateLine, "safe_path = program_path", 1)
	}
	if mutated("docker-outputs-kept") {
		src = strings.Replace(src, "outputs(cn, True)", "outputs(cn, False)", 1)
	}
	_, err := io.WriteString(b.hj.Conn, fmt.Sprintf("session 0 %d\n%s", len(src), src))
	b.hj.Conn.SetWriteDeadline(time.Time{})
	if err != nil {
		return fmt.Errorf("container %.12s did not take the session's supervisor: %w", b.id, err)
	}
	if err := b.awaitLine("mcpsandbox-session:"+b.nonce+"\n", engineOpTimeout); err != nil {
		return fmt.Errorf("container %.12s (image %s) did not start the session's Python interpreter (docker.reuse = \"session\" needs python3 in docker.image): %w",
			b.id, e.spec.image, err)
	}
	return nil
}
