package httpbound

import "testing"

// A session added by its initialize takes the place that request reserved at once: a client that
// starts its next session before the first initialize's handler has returned is not refused
// below the bound (seen as a 503 for the third of three sessions).
func TestSessionsAddTakesTheReservedPlace(t *testing.T) {
	s := NewSessions(2)
	release, ok := s.Reserve()
	if !ok {
		t.Fatal("first reservation refused")
	}
	s.Add("a", nil)
	end, _ := s.Begin("a", false) // a's call runs: not idle
	defer end()
	release2, ok := s.Reserve() // a's initialize has not returned yet
	if !ok {
		t.Fatal("the second session refused while the first's initialize was still returning: one place counted twice")
	}
	s.Add("b", nil)
	end2, _ := s.Begin("b", false)
	defer end2()
	release()
	release2()
	if _, ok := s.Reserve(); ok {
		t.Error("a third session admitted past the bound of 2 with both busy")
	}
}
