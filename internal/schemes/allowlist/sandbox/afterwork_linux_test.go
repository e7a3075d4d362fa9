package sandbox

import (
	"testing"
	"time"
)

// The next call's namespaces are made once serve says the call's answer is out (AfterAnswer),
// not as the command exits, when the call's own end needs the CPU: none is made while the
// answer is not out (the bound it waits for is an hour here), one is at AfterAnswer. Red when
// the work starts as the command exits.
func TestAfterWorkWaitsForTheAnswer(t *testing.T) {
	e := preparingExecutor(t)
	e.after.mu.Lock()
	e.after.max = time.Hour
	e.after.mu.Unlock()
	waitNS := func(within time.Duration) bool {
		deadline := time.Now().Add(within)
		for len(e.netns) == 0 {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(5 * time.Millisecond)
		}
		return true
	}
	if !waitNS(10 * time.Second) { // the start's own
		t.Fatal("no namespaces were prepared at the executor's start")
	}
	(<-e.netns).Close()
	if res := runPython(t, e, "print(1)"); res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	if waitNS(300 * time.Millisecond) {
		t.Fatal("the next call's namespaces were made before the call's answer was out")
	}
	e.AfterAnswer()
	if !waitNS(10 * time.Second) {
		t.Fatal("AfterAnswer: the next call's namespaces were not made")
	}
}
