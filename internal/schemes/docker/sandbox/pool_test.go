package sandbox

import "testing"

// The replacement of a pooled container starts when its call is over, not when it is taken:
// a start beside the call competes with it for the engine's CPU.
func TestPoolRefillsAfterTheCall(t *testing.T) {
	p := &pool{ready: make(chan *box, 1), tokens: make(chan struct{}, 1)}
	p.ready <- &box{}
	if b := p.take(); b == nil {
		t.Fatal("take returned nothing from a pool holding a box")
	}
	if len(p.tokens) != 0 {
		t.Fatal("taking a box let the fillers start its replacement before the call ended")
	}
	if b := p.take(); b != nil {
		t.Fatal("take returned a box from an empty pool")
	}
	p.release()
	if len(p.tokens) != 1 {
		t.Fatal("release did not hand the fillers a token")
	}
}

func TestFillers(t *testing.T) {
	for _, c := range []struct{ size, ncpu, want int }{
		{4, 0, 1}, {4, 1, 1}, {4, 2, 1}, {4, 8, 4}, {2, 16, 2}, {64, 64, 8},
	} {
		if got := fillers(c.size, c.ncpu); got != c.want {
			t.Errorf("fillers(pool %d, %d CPUs) = %d, want %d", c.size, c.ncpu, got, c.want)
		}
	}
}
