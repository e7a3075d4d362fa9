//go:build testhooks

package docker

import (
	"bytes"
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The load rows offer calls at a fixed rate whether or not earlier ones answered (open loop),
// and time each from its scheduled send: a server that takes 300 ms a call, offered 10 calls a
// second for 1 s, answers each in about 300 ms and all within ~1.3 s. A closed loop (each call
// after the previous answer) would take 3 s and hide the backlog.
func TestOpenLoopSendsOnScheduleAndCountsTheBacklog(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "run_python_sandbox"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		time.Sleep(300 * time.Millisecond)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}}}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	t0 := time.Now()
	d, refused, err := openLoop(ctx, cs, &mcp.CallToolParams{Name: "run_python_sandbox", Arguments: map[string]any{}}, 10, time.Second)
	if err != nil || len(refused) > 0 {
		t.Fatal(err, refused)
	}
	if len(d) != 10 {
		t.Fatalf("%d calls, want 10", len(d))
	}
	if took := time.Since(t0); took > 2500*time.Millisecond {
		t.Errorf("10 calls of 300 ms offered over 1 s took %s: not sent on schedule", took)
	}
	for i, x := range d {
		if x < 300*time.Millisecond || x > 1500*time.Millisecond {
			t.Errorf("call %d: %s from its scheduled send, want ~300 ms", i, x)
		}
	}
}

// Pool-empty events are read off serve's debug log: its "call ended" lines, as slog's text
// handler writes them, say whether the call's container was pooled.
func TestCountPooledReadsServesCallEndedLines(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for _, p := range []bool{true, false, true, true} {
		log.Debug("call ended", "container", "0123456789ab", "pooled", p, "ms", 7.5)
	}
	log.Info("pooled=false in another message") // not a call's end
	var pooled, cold atomic.Int64
	countPooled(&buf, &pooled, &cold)
	if pooled.Load() != 3 || cold.Load() != 1 {
		t.Fatalf("pooled %d cold %d, want 3 and 1 from:\n%s", pooled.Load(), cold.Load(), buf.String())
	}
}

// Under overload serve refuses some calls (limits.max_concurrent): the load rows count them and
// time only the answered ones, instead of stopping the bench.
func TestOpenLoopCountsRefusals(t *testing.T) {
	ctx := context.Background()
	srv := mcp.NewServer(&mcp.Implementation{Name: "busy", Version: "1"}, nil)
	var n atomic.Int64
	mcp.AddTool(srv, &mcp.Tool{Name: "run_python_sandbox"}, func(context.Context, *mcp.CallToolRequest, map[string]any) (*mcp.CallToolResult, any, error) {
		if n.Add(1)%2 == 0 {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "refused by rule limits.max_concurrent"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "1"}}}, nil, nil
	})
	st, ct := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	d, refused, err := openLoop(ctx, cs, &mcp.CallToolParams{Name: "run_python_sandbox", Arguments: map[string]any{}}, 20, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(d) != 5 || len(refused) != 5 || refused[0] != "refused by rule limits.max_concurrent" {
		t.Fatalf("answered %d, refused %d %q; want 5 and 5", len(d), len(refused), refused)
	}
}
