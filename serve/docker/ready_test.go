package docker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A call that arrives while serve's start-up checks still run waits for them no longer than
// its hard stop (the harness's wall_time saw calls wait out a slow probe on a loaded engine),
// and a client's cancel ends the wait; once ready, the probe's verdict is the answer.
func TestReadyByBounded(t *testing.T) {
	e := &Executor{callsReady: make(chan struct{})}
	start := time.Now()
	if err := e.readyBy(context.Background(), time.Now().Add(100*time.Millisecond)); !errors.Is(err, errStartTimedOut) {
		t.Fatalf("probe still running at the hard stop: got %v, want errStartTimedOut", err)
	}
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("returned after %s, before the hard stop", d)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := e.readyBy(ctx, time.Time{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: got %v", err)
	}
	e.openCalls(errors.New("no engine"))
	if err := e.readyBy(context.Background(), time.Now().Add(-time.Second)); err == nil || err.Error() != "no engine" {
		t.Errorf("ready (failed) with the hard stop already past: got %v, want the probe's error", err)
	}
}
