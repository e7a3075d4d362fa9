package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// TestInitEndsOnSignal: init blocked where it does not watch its context (as it was reading a
// FIFO client config: SIGTERM and SIGINT were caught and ignored, only SIGKILL ended it) ends
// within the grace period once the signal cancels the context, with an error saying so.
func TestInitEndsOnSignal(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	cmd := NewCmdInit(&Factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}},
		func(context.Context, *InitOptions) error { <-block; return nil })
	cmd.SetArgs([]string{"--scheme", "allowlist"})
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx) }()
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "stopped by a signal") {
			t.Errorf("err = %v", err)
		}
		if took := time.Since(start); took < initGrace/2 {
			t.Errorf("gave up after %v, before the grace period (%v)", took, initGrace)
		}
	case <-time.After(initGrace + 20*time.Second):
		t.Fatal("init went on waiting after its context was cancelled")
	}
}

// TestInitSignalGraceLetsItFinish: init that ends by itself after the signal returns its own
// result, not the interruption.
func TestInitSignalGraceLetsItFinish(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := untilInterrupted(ctx, time.Minute, func(ctx context.Context) error { <-ctx.Done(); return context.Canceled })
	if err != context.Canceled {
		t.Errorf("err = %v, want init's own", err)
	}
}
