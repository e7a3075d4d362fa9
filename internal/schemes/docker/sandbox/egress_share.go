package sandbox

import (
	"net"
	"sync"
	"sync/atomic"
)

// egressShare is the bound on egress connections at once across an executor's containers,
// shared fairly between them. It was once a plain pool, taken first come: the policy allows
// more sandboxes at once (limits.max_concurrent up to 256, docker.max_sessions up to 64) than
// the pool holds containers' bounds, so one client's many sandboxes, each holding its own
// bound's worth of headless connections (re-opened as the head timeout ends them), kept every
// place and every other sandbox got 503 (attack round atk34, F2).
//
// Now, with every place taken, a new connection of a container holding fewer than its share
// (the bound divided among the containers holding connections, counting the newcomer; at least
// 1, at most the container's own bound) takes the place of one connection of the container
// holding the most, which is closed: its oldest still waiting for its request head (it loses
// nothing sent), else its oldest. A container at or past its share is answered 503 as before.
// This is how the HTTP connection bound evicts (internal/serve/httpbound): an outer bound must
// not be one principal's to fill. Sizing the bound for the most sandboxes the policy allows
// instead would let a serve hold 64 × 32 or more connections' memory and descriptors for one
// client.
//
// Memory and descriptors: at most max connections are handled at once; a closed one's handler
// may live on briefly (a dial in progress ends within the dial timeout) and such handlers are
// bounded by max too, past which newcomers get 503.
type egressShare struct {
	max   int // places across containers
	quota int // a container's own bound: its share is never more

	mu     sync.Mutex
	held   int // places taken
	ending int // connections closed to make room whose handler has not returned yet
	seq    uint64
	boxes  map[*boxEgress][]*shareConn // each container's connections holding a place, oldest first
}

// shareConn is one connection holding a place (or, once evicted, ending).
type shareConn struct {
	box     *boxEgress
	c       net.Conn
	headIn  func() bool // its request head has come in (nil: unknown, taken as come)
	seq     uint64      // accept order
	evicted bool        // guarded by the share's mu
}

func newEgressShare(max, quota int) *egressShare {
	return &egressShare{max: max, quota: quota, boxes: map[*boxEgress][]*shareConn{}}
}

// admission is what admit decided.
type admission struct {
	e      *shareConn // the place; nil: refused
	victim *shareConn // the connection closed to make room (already closed), nil if none
	share  int        // the container's share of the places now
	mine   int        // the places it held before
}

// admit gives c of box a place, if need be another container's (see egressShare).
func (s *egressShare) admit(box *boxEgress, c net.Conn, headIn func() bool) (a admission) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a.share, a.mine = s.shareLocked(box), len(s.boxes[box])
	if s.held >= s.max {
		if mutated("docker-egress-fair-share") || a.mine >= a.share || s.ending >= s.max {
			return a
		}
		a.victim = s.victimLocked(a.mine)
		if a.victim == nil {
			return a
		}
		victim := a.victim
		s.removeLocked(victim)
		victim.evicted = true
		s.ending++
		victim.c.Close()
	}
	s.seq++
	a.e = &shareConn{box: box, c: c, headIn: headIn, seq: s.seq}
	s.boxes[box] = append(s.boxes[box], a.e)
	s.held++
	return a
}

// shareLocked is box's share of the places: the bound divided among the containers holding
// connections, box counted, at least 1 and at most the container's own bound.
func (s *egressShare) shareLocked(box *boxEgress) int {
	k := len(s.boxes)
	if len(s.boxes[box]) == 0 {
		k++
	}
	return min(max(1, s.max/k), max(1, s.quota))
}

// victimLocked picks the connection to close for a newcomer of a container holding mine: one
// of the container holding the most (the one whose connections are oldest among equals), if
// that is at least two more than mine (one less would only move the unfairness).
func (s *egressShare) victimLocked(mine int) *shareConn {
	var top []*shareConn
	for _, cs := range s.boxes {
		if len(cs) > len(top) || len(cs) == len(top) && len(cs) > 0 && cs[0].seq < top[0].seq {
			top = cs
		}
	}
	if len(top) < mine+2 {
		return nil
	}
	for _, o := range top {
		if o.headIn != nil && !o.headIn() {
			return o
		}
	}
	return top[0]
}

func (s *egressShare) removeLocked(e *shareConn) {
	cs := s.boxes[e.box]
	for i, o := range cs {
		if o == e {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(s.boxes, e.box)
	} else {
		s.boxes[e.box] = cs
	}
	s.held--
}

// release gives e's place back when its handler returns (an evicted one's was taken already).
func (s *egressShare) release(e *shareConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e.evicted {
		s.ending--
		return
	}
	s.removeLocked(e)
}

// open is how many places are taken and how many closed connections' handlers are ending.
func (s *egressShare) open() (held, ending int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held, s.ending
}

// headWatch tells when a connection's request head has come in: a blank line, as the proxy
// reads it (readHead: "\n\n" or "\r\n\r\n"). Only the connection's reader calls see.
type headWatch struct {
	state int // 0, 1 after '\n', 2 after "\n\r"
	done  atomic.Bool
}

func (h *headWatch) see(p []byte) {
	for _, ch := range p {
		switch {
		case ch == '\n' && h.state > 0:
			h.done.Store(true)
			return
		case ch == '\n':
			h.state = 1
		case ch == '\r' && h.state == 1:
			h.state = 2
		default:
			h.state = 0
		}
	}
}

func (h *headWatch) in() bool { return h.done.Load() }
