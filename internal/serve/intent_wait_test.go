package serve

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A call's started line is written once it has its slot, not while it waits for one: the audit
// log's reserve holds room for the outcomes of calls whose started line it wrote, and those are
// then at most max_concurrent's (attack round atk33, F7: 700 calls parked waiting, each with a
// started line, were cancelled on a full disk and took the room of a call that ran). A call
// cancelled while it waits is audited by its one line. Red with mutant audit-intent-waits.
func TestWaitingCallsHaveNoStartedLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(time.Minute, 1), f, al)
	long, stopLong := context.WithCancel(context.Background())
	defer stopLong()
	go cs.CallTool(long, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"sleep": "30s"}})
	waitFor(t, 5*time.Second, "the first call running", func() bool { return f.running.Load() == 1 })
	const waiters = 8
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range waiters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs.CallTool(ctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"echo": "x"}})
		}()
	}
	time.Sleep(300 * time.Millisecond) // the waiters reach the slot's queue
	started := func() (n int) {
		for _, e := range auditLines(t, path, 0) {
			if e.Decision == audit.DecisionStarted {
				n++
			}
		}
		return n
	}
	if n := started(); n != 1 {
		t.Fatalf("%d started lines with one call running and %d waiting, want 1", n, waiters)
	}
	cancel()
	wg.Wait()
	var cancelled int
	waitFor(t, 5*time.Second, "the waiters' lines", func() bool {
		cancelled = 0
		for _, e := range auditLines(t, path, 0) {
			if e.Decision == "cancelled" {
				cancelled++
			}
		}
		return cancelled == waiters
	})
	if n := started(); n != 1 {
		t.Errorf("%d started lines after the waiters were cancelled, want 1", n)
	}
	stopLong()
}
