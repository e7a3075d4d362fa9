package httpbound

import (
	"container/list"
	"sync"
	"sync/atomic"
	"time"
)

// Sessions bounds the live MCP sessions. A request that would start one reserves a place
// first (Reserve); the session, once started, is added under its id with a way to close it
// (Add) and removed when it ends however it ends (Remove); the reservation is released when
// the request is over. Every request of a session is bracketed by Begin (and the end it
// returns), so the bound knows which sessions are idle: when it is reached, a new session
// takes the place of the least recently used idle one, which is closed like an idle expiry.
type Sessions struct {
	max int

	mu      sync.Mutex
	live    map[string]*session
	lru     list.List           // *session, least recently used first
	gone    map[string]struct{} // evicted, not yet Removed: their requests get 404
	pending int
	taken   int // reservations whose session was added before their request ended (see Add)

	// Evicted counts sessions closed to make room (for logs and tests).
	Evicted atomic.Int64
	// OnEvict, if set, is called (outside the lock) with the id of each session evicted.
	OnEvict func(id string)
}

type session struct {
	id      string
	close   func()
	busy    int // requests and calls in progress, an open GET stream among them
	streams int // of which open GET streams
	elem    *list.Element
}

// NewSessions bounds live sessions to max (at least 1).
func NewSessions(max int) *Sessions {
	if max < 1 {
		max = 1
	}
	return &Sessions{max: max, live: map[string]*session{}, gone: map[string]struct{}{}}
}

// Max is the bound.
func (s *Sessions) Max() int { return s.max }

// Reserve takes a place for a session a request may start; at the bound it evicts the least
// recently used idle session (no request or call in progress; one whose only activity is an
// open GET stream goes after every session with none), and ok is false only when every
// session is busy. release must be called once the request is over.
func (s *Sessions) Reserve() (release func(), ok bool) {
	s.mu.Lock()
	var victim *session
	if len(s.live)+s.pending >= s.max && !mutated("http-session-cap") {
		if !mutated("http-session-evict") {
			victim = s.idleLocked()
		}
		if victim == nil {
			s.mu.Unlock()
			return nil, false
		}
		s.dropLocked(victim)
		s.gone[victim.id] = struct{}{}
		s.Evicted.Add(1)
	}
	s.pending++
	s.mu.Unlock()
	if victim != nil {
		if s.OnEvict != nil {
			s.OnEvict(victim.id)
		}
		if victim.close != nil {
			victim.close()
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.taken > 0 {
				s.taken-- // a reservation its session already took over (Add)
			} else {
				s.pending--
			}
			s.mu.Unlock()
		})
	}, true
}

// idleLocked is the least recently used session with nothing in progress, else the least
// recently used whose only activity is open GET streams (nil if none).
func (s *Sessions) idleLocked() *session {
	var streaming *session
	for e := s.lru.Front(); e != nil; e = e.Next() {
		o := e.Value.(*session)
		switch {
		case o.busy == 0:
			return o
		case o.busy == o.streams && streaming == nil:
			streaming = o
		}
	}
	return streaming
}

func (s *Sessions) dropLocked(o *session) {
	if o.elem != nil {
		s.lru.Remove(o.elem)
		o.elem = nil
	}
	delete(s.live, o.id)
}

// Add counts a started session; close ends it (as its idle expiry would) if it is evicted.
func (s *Sessions) Add(id string, close func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.live[id]; ok {
		return
	}
	o := &session{id: id, close: close}
	o.elem = s.lru.PushBack(o)
	s.live[id] = o
	// The initialize that started it held a reserved place: the session takes that place now,
	// not when the request's handler returns (its client may start the next session first,
	// which then saw the one place counted twice and was refused below the bound).
	if s.pending > 0 {
		s.pending--
		s.taken++
	}
}

// Remove forgets an ended session.
func (s *Sessions) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if o, ok := s.live[id]; ok {
		s.dropLocked(o)
	}
	delete(s.gone, id)
}

// Begin marks a request (stream: a GET's event stream) or a call of session id as in
// progress, and the session as just used, until end is called. ok is false when the session
// was evicted: the request must be answered 404, so its client starts a new session. An id
// the bound does not know (not a session, or one still starting) is let through.
func (s *Sessions) Begin(id string, stream bool) (end func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, gone := s.gone[id]; gone {
		return func() {}, false
	}
	o, live := s.live[id]
	if !live {
		return func() {}, true
	}
	o.busy++
	if stream {
		o.streams++
	}
	s.lru.MoveToBack(o.elem)
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			o.busy--
			if stream {
				o.streams--
			}
			if o.elem != nil {
				s.lru.MoveToBack(o.elem)
			}
		})
	}, true
}

// Live says whether id is a live session.
func (s *Sessions) Live(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.live[id]
	return ok
}

// Len is the number of live sessions.
func (s *Sessions) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.live)
}

// IdleTimeout is the idle expiry handed to the MCP handler (SessionTimeout): d itself.
func IdleTimeout(d time.Duration) time.Duration {
	if mutated("http-session-idle") {
		return 0
	}
	return d
}
