package serve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"
)

// beginExec is a fakeExec with deferred start-up (scheme.ExecOptions.DeferStart): begun is
// closed at Begin.
type beginExec struct {
	fakeExec
	once  sync.Once
	begun chan struct{}
}

func (b *beginExec) Begin() { b.once.Do(func() { close(b.begun) }) }

// lineServe runs Run over a LineTransport on pipes: send writes a line, expect reads the next.
func lineServe(t *testing.T, ex *beginExec) (send func(string), expect func(string), done chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done = make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), ex, Options{Transport: &LineTransport{In: inR, Out: outW}})
	}()
	t.Cleanup(func() { inW.Close(); outR.Close() })
	lines := bufio.NewReader(outR)
	send = func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Error(err)
		}
	}
	expect = func(want string) {
		l, err := lines.ReadString('\n')
		if err != nil || !strings.Contains(l, want) {
			t.Fatalf("answer %q (%v), want %s", l, err, want)
		}
	}
	return send, expect, done
}

const (
	initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	listLine = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
)

func begunWithin(b *beginExec, d time.Duration) bool {
	select {
	case <-b.begun:
		return true
	case <-time.After(d):
		return false
	}
}

// Over stdio, an executor's deferred start-up (the allowlist's layer probe) begins once
// initialize and tools/list are answered, not before: its helper processes do not compete with
// the first answers.
func TestRunBeginsDeferredStartAfterToolsList(t *testing.T) {
	defer func(d time.Duration) { startDeferMax = d }(startDeferMax)
	startDeferMax = time.Hour
	ex := &beginExec{begun: make(chan struct{})}
	send, expect, _ := lineServe(t, ex)
	send(initLine)
	expect(`"id":1`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if begunWithin(ex, 200*time.Millisecond) {
		t.Fatal("deferred start-up began before tools/list was answered")
	}
	send(listLine)
	expect(`"id":2`)
	if !begunWithin(ex, 10*time.Second) {
		t.Fatal("deferred start-up did not begin after tools/list was answered")
	}
}

// A client that never lists the tools does not hold start-up back for more than startDeferMax,
// and a start-up that fails leaves serve answering, every call refused with its error.
func TestRunDeferredStartFallbackAndFailure(t *testing.T) {
	defer func(d time.Duration) { startDeferMax = d }(startDeferMax)
	startDeferMax = 50 * time.Millisecond
	ex := &beginExec{begun: make(chan struct{})}
	ex.ready = make(chan error, 1)
	ex.ready <- errors.New("the helper cannot start: test")
	send, expect, done := lineServe(t, ex)
	send(initLine)
	expect(`"id":1`)
	if !begunWithin(ex, 10*time.Second) {
		t.Fatal("deferred start-up never began without tools/list")
	}
	time.Sleep(100 * time.Millisecond) // serve reads the failure in a goroutine of its own
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"x"}}}`)
	expect(`the helper cannot start: test`)
	select {
	case err := <-done:
		t.Fatalf("Run ended (%v) after a deferred start-up failed", err)
	default:
	}
}
