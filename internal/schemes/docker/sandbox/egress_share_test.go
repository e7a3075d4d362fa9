package sandbox

import (
	"fmt"
	"net"
	"testing"
)

// holdPlaces gives box n places in s (connections that are never served), as other
// containers' connections would hold them.
func holdPlaces(t *testing.T, s *egressShare, box *boxEgress, n int) []*shareConn {
	t.Helper()
	var out []*shareConn
	for range n {
		c, peer := net.Pipe()
		t.Cleanup(func() { c.Close(); peer.Close() })
		a := s.admit(box, c, nil)
		if a.e == nil {
			t.Fatalf("holdPlaces: %s's place %d refused", box.name, len(out)+1)
		}
		out = append(out, a.e)
	}
	return out
}

// shareSim drives an egressShare as containers' proxies do: each hog keeps its own bound's
// worth of headless connections open, re-opening those closed to make room at once (the
// connection a handler served returns its place: release).
type shareSim struct {
	t     *testing.T
	s     *egressShare
	held  map[*boxEgress][]*shareConn
	refus map[*boxEgress]int
}

func newShareSim(t *testing.T, s *egressShare) *shareSim {
	return &shareSim{t: t, s: s, held: map[*boxEgress][]*shareConn{}, refus: map[*boxEgress]int{}}
}

// open is one new connection of box; false when refused (503).
func (m *shareSim) open(box *boxEgress, headIn bool) bool {
	c, peer := net.Pipe()
	m.t.Cleanup(func() { c.Close(); peer.Close() })
	a := m.s.admit(box, c, func() bool { return headIn })
	if v := a.victim; v != nil {
		cs := m.held[v.box]
		for i, o := range cs {
			if o == v {
				m.held[v.box] = append(cs[:i:i], cs[i+1:]...)
				break
			}
		}
		m.s.release(v) // its handler ends on the closed connection
	}
	if held, ending := m.s.open(); held > m.s.max || ending > m.s.max {
		m.t.Fatalf("%d places held and %d ending, past the bound of %d", held, ending, m.s.max)
	}
	if a.e == nil {
		m.refus[box]++
		return false
	}
	m.held[box] = append(m.held[box], a.e)
	return true
}

// fill makes each hog open connections until it holds quota or is refused, rounds times (the
// hogs re-open what was closed to make room).
func (m *shareSim) fill(hogs []*boxEgress, quota, rounds int) {
	for range rounds {
		for _, h := range hogs {
			for len(m.held[h]) < quota && m.open(h, false) {
			}
		}
	}
}

func boxes(prefix string, n int) []*boxEgress {
	out := make([]*boxEgress, n)
	for i := range out {
		out[i] = &boxEgress{name: fmt.Sprintf("%s-%d", prefix, i)}
	}
	return out
}

// atk34 F2: the bound across containers was taken first come. With the most sandboxes the policy
// allows at once (limits.max_concurrent = 256 calls, docker.max_sessions = 64 idle session
// containers, which keep background processes), every one but the last holding its own
// bound's worth of headless connections and re-opening them, the last one's connections are
// still admitted, up to its share, and the hogs never hold more than the bound. The same with
// the attack's shape: nine sandboxes of one client under the default bound (256), where the
// tenth got 503.
func TestEgressShareMaximumShape(t *testing.T) {
	for _, tc := range []struct {
		name      string
		sandboxes int
	}{
		{"attack: nine hogs, max_concurrent = 10", 10},
		{"max_concurrent = 256, docker.max_sessions = 64", 256 + 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			quota := DefaultEgressConns
			s := newEgressShare(egressTotal(quota, tc.sandboxes), quota)
			m := newShareSim(t, s)
			hogs := boxes("hog", tc.sandboxes-1)
			m.fill(hogs, quota, 3)
			if held, _ := s.open(); tc.sandboxes-1 > 8 && held != s.max {
				t.Fatalf("the hogs hold %d of %d places: the bound is not full, the test shows nothing", held, s.max)
			}
			victim := &boxEgress{name: "victim"}
			if !m.open(victim, false) {
				t.Fatalf("another sandbox's connection refused while %d sandboxes hold the bound of %d", len(hogs), s.max)
			}
			m.fill(hogs, quota, 2) // the hogs try to take it back
			for m.open(victim, true) {
			}
			want := min(quota, max(1, s.max/tc.sandboxes))
			if got := len(m.held[victim]); got < want {
				t.Errorf("the other sandbox holds %d connections, want its share %d", got, want)
			}
			most := 0
			for _, h := range hogs {
				most = max(most, len(m.held[h]))
			}
			held, ending := s.open()
			t.Logf("bound %d: %d hogs, the most held by one %d, the other sandbox %d; held %d, ending %d",
				s.max, len(hogs), most, len(m.held[victim]), held, ending)
			if held > s.max {
				t.Errorf("%d places held, past the bound of %d", held, s.max)
			}
		})
	}
}

// The connection closed to make room is the top holder's oldest still waiting for its request
// head; one whose head came in (a request being answered, a tunnel) goes only when none waits.
// A sandbox one connection short of the top holder takes nothing (that would only move the
// unfairness), nor does one at its share.
func TestEgressShareVictim(t *testing.T) {
	s := newEgressShare(6, 4)
	m := newShareSim(t, s)
	a, b, c := &boxEgress{name: "a"}, &boxEgress{name: "b"}, &boxEgress{name: "c"}
	m.open(a, true)
	m.open(a, false)
	m.open(a, true)
	m.open(a, false)
	m.open(b, true)
	m.open(b, true)
	if !m.open(c, false) {
		t.Fatal("c, holding nothing, refused")
	}
	if n := len(m.held[a]); n != 3 || m.held[a][0].headIn() != true || m.held[a][1].headIn() != true || m.held[a][2].headIn() != false {
		t.Fatalf("a after c's connection: %d held; want its oldest headless one closed", n)
	}
	// a 3, b 2, c 1: c's share is 6/3 = 2, and a holds 3 = 1+2
	if !m.open(c, false) {
		t.Fatal("c, under its share, refused")
	}
	if len(m.held[a]) != 2 || len(m.held[c]) != 2 {
		t.Fatalf("a %d, c %d: want 2 each", len(m.held[a]), len(m.held[c]))
	}
	if m.open(c, false) {
		t.Error("c, at its share, took another's place")
	}
	if m.open(a, false) || m.open(b, false) {
		t.Error("a sandbox at its share took another's place")
	}
	d := &boxEgress{name: "d"}
	if m.open(d, false) { // d's share: 6/4 = 1; a, b and c hold 2 each: a's oldest goes, its head in
		if len(m.held[a])+len(m.held[b])+len(m.held[c]) != 5 {
			t.Errorf("d took a place but the others hold %d", len(m.held[a])+len(m.held[b])+len(m.held[c]))
		}
	} else {
		t.Error("d, holding nothing, refused while others hold 2 each")
	}
}
