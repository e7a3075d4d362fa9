package serve

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
)

// Bounds on the answers made and not yet read by their client (README: bounds table).
const (
	MaxUnreadAnswers    = bounds.MaxUnreadAnswers
	MaxUnreadAnswersAll = bounds.MaxUnreadAnswersAll
)

// unread counts, per stdio connection and in all, the bytes of tools/call answers made and not
// yet written out (a write blocks while the client does not read, and every later answer waits
// behind it, each held whole). A call waits to run while its connection's or everyone's count
// is at the bound: a client that sends calls and never reads the answers stalls its own
// sessions, with a few answers in serve's memory instead of one per call. Everyone's bound is
// shared by session (roomLocked).
//
// The handler owes an answer's estimated size when it is made (answerSizeOf, from the answer
// itself); the connection, when it begins to write a tools/call answer, pays the oldest estimate
// and counts that answer at its exact size until it is written (writing). Answers are written
// in any order, so an estimate may be paid by another call's answer, but an exact count only by
// its own write, which a client that does not read never lets finish.
type unread struct {
	mu          sync.Mutex
	conns       map[string]*debts
	all         int64
	maxPer, max int64
	changed     chan struct{} // closed and replaced when a count goes down
	// onCut, if set, hears of each answer cut to make room (fairShare); u.mu is not held
	onCut func(conn string, n int64)
}

type debts struct {
	owed  int64
	queue []int64
	// held: made by hold for a connection that pays no debts (HTTP's sessions); forgotten when
	// nothing is held any more
	held bool
	// answers: the answers counted by hold, oldest first, that fairShare may cut
	answers []*heldAnswer
}

// heldAnswer is an HTTP answer counted until its request is over, or until it is cut.
type heldAnswer struct {
	n   int64
	cut func() // closes the connection writing it
}

// unreadBounds are the bounds a server counts under (a test lowers them to keep its answers small).
var unreadBounds = func() (perConn, all int64) { return MaxUnreadAnswers, MaxUnreadAnswersAll }

func newUnread(maxPer, max int64) *unread {
	return &unread{conns: map[string]*debts{}, maxPer: maxPer, max: max, changed: make(chan struct{})}
}

// open starts counting a connection's answers (one that will pay its debts); close forgets it.
func (u *unread) open(conn string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	u.conns[conn] = &debts{}
	u.mu.Unlock()
}

func (u *unread) close(conn string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	if d, ok := u.conns[conn]; ok {
		u.all -= d.owed
		delete(u.conns, conn)
		u.wake()
	}
	u.mu.Unlock()
}

// owe counts an answer of n bytes made for conn's client (nothing for a connection not opened:
// one that pays no debts, as HTTP's, whose answers its write stall bounds), and ends the
// call's reservation res in the same step (settle).
func (u *unread) owe(conn string, n int64, res *reservation) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.settleLocked(res)
	if mutated("unread-answers") {
		return
	}
	d, ok := u.conns[conn]
	if !ok || d.held {
		return
	}
	d.owed += n
	d.queue = append(d.queue, n)
	u.all += n
}

// reserve counts n bytes against conn and everyone while a call runs, for the answer it may
// make: the calls that take slots at once each see the others' (attack round atk25b, F4:
// checked only before running and counted only after, 4 calls of 250 MB answers passed at once).
// It is made only while conn's and everyone's counts are under their bounds (false: wait), in
// one step with that check, so two calls cannot both pass it before either counts. The
// reservation ends with End, or when the call's answer is counted (hold, owe): in one step
// with that count, so an answer is never counted twice, as made and as reserved.
func (u *unread) reserve(conn string, n int64) (*reservation, bool) {
	if u == nil {
		return nil, true
	}
	u.mu.Lock()
	cuts, ok := u.roomLocked(conn, true)
	res := &reservation{u: u}
	if ok && !mutated("unread-unreserved") {
		res.end = u.countLocked(conn, n)
	}
	u.mu.Unlock()
	u.cutAll(cuts)
	return res, ok
}

// reservation is a running call's count for the answer it may make (reserve).
type reservation struct {
	u   *unread
	end func(locked bool) // nil once ended, or when nothing was counted
}

// End ends the reservation (a call that made no answer to count); nil-safe, once.
func (r *reservation) End() {
	if r == nil {
		return
	}
	r.u.mu.Lock()
	defer r.u.mu.Unlock()
	r.u.settleLocked(r)
}

// settleLocked ends res, if it still counts (u.mu held).
func (u *unread) settleLocked(res *reservation) {
	if res == nil || res.end == nil {
		return
	}
	end := res.end
	res.end = nil
	if mutated("unread-answer-counted-twice") {
		// the old order: the answer counted first, the reservation ended after, apart
		go func() { time.Sleep(time.Millisecond); end(false) }()
		return
	}
	end(true)
}

// hold counts an answer of n bytes made for conn's client until done ends: over HTTP, an
// answer is encoded and written on the request that carried its call, for as long as the
// client takes to read it (a write stall ends it only when no byte moves for a while), and the
// call's slot is free by then. Without this count, clients reading slowly had serve hold
// every answer at once: 60 connections reading read_file answers slowly took serve to 4 GB
// (attack round atk25b, F1).
//
// The call's reservation res ends in the same step (settle).
func (u *unread) hold(conn string, n int64, done context.Context, res *reservation) {
	if u == nil {
		return
	}
	u.mu.Lock()
	a := u.holdLocked(conn, n, done, res)
	if mutated("unread-hold-cuts-new") {
		a = nil
	}
	cuts := u.overLocked(a)
	u.mu.Unlock()
	u.cutAll(cuts)
}

// overLocked cuts held answers, the largest holder's oldest first, while everyone's count is
// past the bound and one reservation (u.mu held; returned to be cut once it is let go): a
// reservation is at most one session's bound, but an answer made is counted whole, and each
// call that ended after the last admission added what its answer took past its reservation
// (four 48 MiB answers of 32 MiB reservations: 192 MiB counted against 128 MiB and one
// reservation, session 43's CI). The answer just counted, keep, is not cut: one answer past the
// bound alone (a policy's max_output_bytes may allow it) was cut before its first byte, every
// time, on an idle serve, though its call ran (attack round atk44b F2); it is held as made.
func (u *unread) overLocked(keep *heldAnswer) []cutAnswer {
	if mutated("unread-hold-over") {
		return nil
	}
	var cuts []cutAnswer
	for u.all > u.max+u.maxPer {
		big, at := "", 0
		for c, d := range u.conns {
			i := 0
			if len(d.answers) > 0 && d.answers[0] == keep {
				i = 1
			}
			if i < len(d.answers) && (big == "" || d.owed > u.conns[big].owed) {
				big, at = c, i
			}
		}
		if big == "" {
			break
		}
		d := u.conns[big]
		a := d.answers[at]
		d.answers = slices.Delete(d.answers, at, at+1)
		d.owed -= a.n
		u.all -= a.n
		if d.held && d.owed <= 0 {
			delete(u.conns, big)
		}
		cuts = append(cuts, cutAnswer{conn: big, a: a})
	}
	if len(cuts) > 0 {
		u.wake()
	}
	return cuts
}

// holdLocked is hold's count (u.mu held); the answer as fairShare may cut it (nil: it cannot be).
func (u *unread) holdLocked(conn string, n int64, done context.Context, res *reservation) *heldAnswer {
	u.settleLocked(res)
	if mutated("http-answers-unheld") {
		return nil
	}
	cut, _ := done.Value(cutKey{}).(func())
	release := u.countLocked(conn, n)
	if cut == nil {
		context.AfterFunc(done, func() { release(false) })
		return nil
	}
	// once the request is over its connection may carry the client's next one: not cut then
	d, a := u.conns[conn], &heldAnswer{n: n, cut: func() {
		if done.Err() == nil {
			cut()
		}
	}}
	d.answers = append(d.answers, a)
	context.AfterFunc(done, func() {
		u.mu.Lock()
		if !slices.Contains(d.answers, a) {
			u.mu.Unlock()
			return // cut: uncounted then
		}
		d.answers = slices.DeleteFunc(d.answers, func(o *heldAnswer) bool { return o == a })
		release(true)
		u.mu.Unlock()
	})
	return a
}

// cutKey is the context key under which a POST's context (posts.gone) carries the func that
// closes the connection its answer is written on.
type cutKey struct{}

// countLocked adds n to conn's and everyone's counts (u.mu held; conn need not pay debts: an
// entry made here is forgotten once nothing is counted in it) until the returned func is
// called (locked: with u.mu held).
func (u *unread) countLocked(conn string, n int64) func(locked bool) {
	d, ok := u.conns[conn]
	if !ok {
		d = &debts{held: true}
		u.conns[conn] = d
	}
	d.owed += n
	u.all += n
	return func(locked bool) {
		if !locked {
			u.mu.Lock()
			defer u.mu.Unlock()
		}
		if u.conns[conn] != d {
			return // its connection closed meanwhile: its counts went with it (close)
		}
		d.owed -= n
		u.all -= n
		if d.held && d.owed <= 0 {
			delete(u.conns, conn)
		}
		u.wake()
	}
}

// answerBound is the most a call of tool may make its answer take (answerSize), at most the
// bound of one client: what its reservation counts while it runs. Its stdout and stderr of
// maxOutput bytes each, six bytes a byte as JSON, twice; read_file's content besides (text
// at most 1.7 times its bytes as JSON, twice: executor.textLike; base64 less) and its picture.
func (u *unread) answerBound(tool string, maxOutput, maxFile int64) int64 {
	n := int64(1024) + 24*maxOutput
	if tool == executor.ToolReadFile {
		n += 4*maxFile + maxFile*4/3
	}
	n *= heldPerAnswerByte
	if u != nil {
		n = min(n, u.maxPer)
	}
	return n
}

// writing counts a tools/call answer of n bytes (its exact size as written, times what serve
// holds a byte) while conn writes it, until the returned func is called (written, or lost with
// the connection): the exact count is this answer's own, paid by no other (attack round atk44b
// F3: a written answer paid the oldest debt, whoever owed it, and cheap answers' writes left
// every big answer uncounted while it waited: 24 of 24 calls ran unread, 164 MiB against a
// 4 MiB bound).
//
// In the same step a result (owed: the handler made it, and owed its estimate) pays one
// estimate: the smallest, not the oldest. Which estimate is this answer's is not known here
// (the SDK marshals the answer between the handler and this write, 0.1 to 1.5 s for a large
// one), but paying the smallest never pays more than the answer's own: the estimates left
// always cover the answers not yet written. A JSON-RPC error pays none: the SDK makes it for a
// call that never reached the handler (an unknown tool, params that did not decode), which owed
// nothing; paying the oldest estimate for it left a big answer uncounted while the SDK encoded
// it, and a client sending an unknown-tool call after each big one had 5 to 15 run unread
// (attack round atk44c F2).
func (u *unread) writing(conn string, n int64, owed bool) func() {
	if u == nil || mutated("unread-answers") {
		return func() {}
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	d, ok := u.conns[conn]
	if !ok || d.held {
		return func() {}
	}
	if mutated("unread-paid-by-position") { // the old way: the oldest estimate paid once written, no count of its own
		return func() {
			u.mu.Lock()
			defer u.mu.Unlock()
			if u.conns[conn] == d {
				u.payLocked(d)
			}
		}
	}
	if owed || mutated("unread-paid-oldest") {
		u.payLocked(d)
	}
	release := u.countLocked(conn, n)
	return func() { release(false) }
}

// payLocked uncounts d's smallest estimate, if any (u.mu held; the queue holds at most the
// connection's requests in flight, MaxInflight).
func (u *unread) payLocked(d *debts) {
	if len(d.queue) == 0 {
		return
	}
	at := 0
	if !mutated("unread-paid-oldest") {
		at = minAt(d.queue)
	}
	n := d.queue[at]
	d.queue = slices.Delete(d.queue, at, at+1)
	if len(d.queue) == 0 {
		d.queue = nil // the backing array of a long session is not kept
	}
	d.owed -= n
	u.all -= n
	u.wake()
}

// minAt is the index of q's smallest value (q not empty).
func minAt(q []int64) int {
	at := 0
	for i, v := range q {
		if v < q[at] {
			at = i
		}
	}
	return at
}

// wake tells the waiting calls a count went down; u.mu is held.
func (u *unread) wake() {
	close(u.changed)
	u.changed = make(chan struct{})
}

// cutAnswer is an answer fairShare cut, and the session it was for.
type cutAnswer struct {
	conn string
	a    *heldAnswer
}

// roomLocked says whether a call of conn may be admitted now (u.mu held): its session's
// answers are under their bound, and everyone's are too, or its session holds less than its
// fair share of everyone's bound and enough answers of sessions holding more can be cut to
// bring everyone's under it. With cut, those are uncounted and returned, to be cut (cutAll)
// once u.mu is let go.
//
// The serve-wide bound taken first come let one client's many sessions (each under its own
// bound) fill it with answers they never read, and every other client's calls waited and were
// refused (attack round atk34, F3). Shared as the slots are: by session, the largest holder
// over its share gives up its oldest answer first, and a session at or over its share waits.
func (u *unread) roomLocked(conn string, cut bool) ([]cutAnswer, bool) {
	var mine int64
	if d, ok := u.conns[conn]; ok {
		mine = d.owed
	}
	if mine >= u.maxPer {
		return nil, false
	}
	if u.all < u.max {
		return nil, true
	}
	if mutated("unread-fair-share") {
		return nil, false
	}
	share := u.shareLocked(conn)
	if mine >= share {
		return nil, false
	}
	// plan on copies: nothing is cut unless enough can be
	owed, next := map[string]int64{}, map[string]int{}
	for c, d := range u.conns {
		owed[c] = d.owed
	}
	var cuts []cutAnswer
	for all := u.all; all >= u.max; {
		big := ""
		for c, d := range u.conns {
			if c != conn && owed[c] > share && next[c] < len(d.answers) && (big == "" || owed[c] > owed[big]) {
				big = c
			}
		}
		if big == "" {
			return nil, false
		}
		a := u.conns[big].answers[next[big]]
		next[big]++
		owed[big] -= a.n
		all -= a.n
		cuts = append(cuts, cutAnswer{conn: big, a: a})
	}
	if cut {
		for _, c := range cuts {
			d := u.conns[c.conn]
			d.answers = slices.DeleteFunc(d.answers, func(o *heldAnswer) bool { return o == c.a })
			d.owed -= c.a.n
			u.all -= c.a.n
			if d.held && d.owed <= 0 {
				delete(u.conns, c.conn)
			}
		}
		u.wake()
	}
	return cuts, true
}

// shareLocked is conn's fair share of everyone's bound: the bound over the sessions holding
// answers (or reservations), conn counted among them; u.mu is held.
func (u *unread) shareLocked(conn string) int64 {
	n := int64(0)
	for c, d := range u.conns {
		if d.owed > 0 || c == conn {
			n++
		}
	}
	if _, ok := u.conns[conn]; !ok {
		n++
	}
	return u.max / max(n, 1)
}

// cutAll closes the connections writing the answers roomLocked cut (u.mu not held): as the
// write stall does, and the call's audit line was written before its answer was.
func (u *unread) cutAll(cuts []cutAnswer) {
	for _, c := range cuts {
		c.a.cut()
		if u.onCut != nil {
			u.onCut(c.conn, c.a.n)
		}
	}
}

// wait holds a call of conn until its connection's and everyone's unread answers are under
// their bounds, at most for timeout (then an error saying why) or until ctx ends.
func (u *unread) wait(ctx context.Context, conn string, timeout time.Duration) error {
	if u == nil {
		return nil
	}
	var deadline <-chan time.Time
	for {
		u.mu.Lock()
		_, room := u.roomLocked(conn, false)
		over, changed := !room, u.changed
		var mine int64
		if d, ok := u.conns[conn]; ok {
			mine = d.owed
		}
		all := u.all
		u.mu.Unlock()
		if !over {
			return nil
		}
		if deadline == nil {
			t := time.NewTimer(timeout)
			defer t.Stop()
			deadline = t.C
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline:
			if mine >= u.maxPer {
				return fmt.Errorf("the client's earlier answers, unread or still being made by its running calls, held %d MiB (the bound is %d MiB) for as long as the call may run: it was not run; read the answers, then call again", mine>>20, u.maxPer>>20)
			}
			return fmt.Errorf("answers unread or being made held %d MiB (the bound for all clients is %d MiB) for as long as the call may run: it was not run; call again", all>>20, u.max>>20)
		}
	}
}

// heldPerAnswerByte is what serve holds per byte of an answer while it is encoded and written:
// the result's strings, the encoded message, the transport's frame of it. Measured with
// read_file answers (attack round atk25b: RSS against answers in flight, over stdio and HTTP).
const heldPerAnswerByte = 4

// jsonLen is the length of s as a JSON string by Go's encoder, without the quotes.
func jsonLen(s string) int64 {
	var n int64
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				n += 6
			case c == '"' || c == '\\':
				n += 2
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += int64(size)
		}
		i += size
	}
	return n
}
