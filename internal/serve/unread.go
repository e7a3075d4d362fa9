package serve

import (
	"context"
	"fmt"
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
// is at the bound: a client that sends calls and never reads the answers stalls only itself,
// with a few answers in serve's memory instead of one per call.
//
// The handler owes an answer's estimated size when it is made; the connection pays the oldest
// debt when it has written a tools/call answer out. Answers are written in any order, so a
// debt may be paid by another call's answer: the sum is what counts, and a debt is paid only
// by a write that went through, which a client that does not read never lets happen.
type unread struct {
	mu          sync.Mutex
	conns       map[string]*debts
	all         int64
	maxPer, max int64
	changed     chan struct{} // closed and replaced when a count goes down
}

type debts struct {
	owed  int64
	queue []int64
	// held: made by hold for a connection that pays no debts (HTTP's sessions); forgotten when
	// nothing is held any more
	held bool
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
// one that pays no debts, as HTTP's, whose answers its write stall bounds).
func (u *unread) owe(conn string, n int64) {
	if u == nil || mutated("unread-answers") {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
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
// returned func ends the reservation.
func (u *unread) reserve(conn string, n int64) (func(), bool) {
	if u == nil {
		return func() {}, true
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.overLocked(conn) {
		return nil, false
	}
	if mutated("unread-unreserved") {
		return func() {}, true
	}
	return u.countLocked(conn, n), true
}

// hold counts an answer of n bytes made for conn's client until done ends: over HTTP, an
// answer is encoded and written on the request that carried its call, for as long as the
// client takes to read it (a write stall ends it only when no byte moves for a while), and the
// call's slot is free by then. Without this count, clients reading slowly had serve hold
// every answer at once: 60 connections reading read_file answers slowly took serve to 4 GB
// (attack round atk25b, F1).
func (u *unread) hold(conn string, n int64, done context.Context) {
	if u == nil || mutated("http-answers-unheld") {
		return
	}
	context.AfterFunc(done, u.count(conn, n))
}

// count adds n to conn's and everyone's counts (conn need not pay debts: an entry made here is
// forgotten once nothing is counted in it) until the returned func is called.
func (u *unread) count(conn string, n int64) func() {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.countLocked(conn, n)
}

// countLocked is count with u.mu held.
func (u *unread) countLocked(conn string, n int64) func() {
	d, ok := u.conns[conn]
	if !ok {
		d = &debts{held: true}
		u.conns[conn] = d
	}
	d.owed += n
	u.all += n
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
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

// paid uncounts conn's oldest answer: a tools/call answer was written out.
func (u *unread) paid(conn string) {
	if u == nil {
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	d, ok := u.conns[conn]
	if !ok || len(d.queue) == 0 {
		return
	}
	n := d.queue[0]
	d.queue = d.queue[1:]
	if len(d.queue) == 0 {
		d.queue = nil // the backing array of a long session is not kept
	}
	d.owed -= n
	u.all -= n
	u.wake()
}

// wake tells the waiting calls a count went down; u.mu is held.
func (u *unread) wake() {
	close(u.changed)
	u.changed = make(chan struct{})
}

// overLocked says whether conn's or everyone's unread answers are at their bound; u.mu is held.
func (u *unread) overLocked(conn string) bool {
	if d, ok := u.conns[conn]; ok && d.owed >= u.maxPer {
		return true
	}
	return u.all >= u.max
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
		over, changed := u.overLocked(conn), u.changed
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

// answerSize estimates the bytes a call's result takes in its answer: its outputs twice (the
// text content repeats them beside the structured result), each string as JSON writes it (a
// control byte or an HTML character as six bytes, as Go's encoder escapes them), what read_file
// read, pictures as base64. Counted once, when the call ends, before anything is encoded.
func answerSize(res *executor.Result) int64 {
	return heldPerAnswerByte * answerBytes(res)
}

// heldPerAnswerByte is what serve holds per byte of an answer while it is encoded and written:
// the result's strings, the encoded message, the transport's frame of it. Measured with
// read_file answers (attack round atk25b: RSS against answers in flight, over stdio and HTTP).
const heldPerAnswerByte = 4

// answerBytes is answerSize's count of the answer's own bytes.
func answerBytes(res *executor.Result) int64 {
	n := int64(1024)
	if res == nil {
		return n
	}
	n += 2 * (jsonLen(res.Stdout) + jsonLen(res.Stderr))
	n += 256 * int64(len(res.Entries))
	if f := res.File; f != nil {
		n += 2*jsonLen(f.Content) + int64(len(f.ContentBase64))
	}
	for _, im := range res.Images {
		n += int64(len(im.Data))*4/3 + 256 // base64, in the content only
	}
	return n
}

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
