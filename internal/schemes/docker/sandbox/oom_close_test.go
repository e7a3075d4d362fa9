package sandbox

import (
	"context"
	"testing"
	"time"
)

// A serve closed before its probe subscribed to the engine's events (a client that connects and
// leaves at once, as `claude mcp list` does) must not leave the probe, and Close behind it,
// waiting forever: that left serve processes running after their client was gone.
func TestWatchOOMReturnsWhenClosedFirst(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := &Executor{life: ctx}
	done := make(chan struct{})
	go func() { e.watchOOM(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("watchOOM still waits for a subscription that will never be made: the probe and Close hang")
	}
}
