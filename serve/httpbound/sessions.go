package httpbound

import (
	"sync"
	"time"
)

// Sessions bounds the live MCP sessions. A request that would start one reserves a place
// first (Reserve); the session, once started, is added under its id (Add) and removed when it
// ends however it ends (Remove); the reservation is released when the request is over.
type Sessions struct {
	max int

	mu      sync.Mutex
	live    map[string]struct{}
	pending int
}

// NewSessions bounds live sessions to max (at least 1).
func NewSessions(max int) *Sessions {
	if max < 1 {
		max = 1
	}
	return &Sessions{max: max, live: map[string]struct{}{}}
}

// Max is the bound.
func (s *Sessions) Max() int { return s.max }

// Reserve takes a place for a session a request may start; ok is false when the bound is
// reached. release must be called once the request is over.
func (s *Sessions) Reserve() (release func(), ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.live)+s.pending >= s.max && !mutated("http-session-cap") {
		return nil, false
	}
	s.pending++
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			s.pending--
			s.mu.Unlock()
		})
	}, true
}

// Add counts a started session.
func (s *Sessions) Add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[id] = struct{}{}
}

// Remove forgets an ended session.
func (s *Sessions) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.live, id)
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
