package scheme

import (
	"context"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchRun is what `go run -tags testhooks ./bench` hands a scheme's Bench: the binary under
// test (a release build), a scratch directory, and where rows, skips and notes go. A scheme's
// Bench times its calls through serve beside their baselines, measured in the same run.
type BenchRun struct {
	N    int    // calls per row
	Bin  string // the mcpsandbox binary under test
	Dir  string // a scratch directory, removed after the run
	Only bool   // -only names this scheme: its own calls and their baselines, no peers or other transports
	Part string // -only SCHEME:PART: only that part of the scheme's rows ("" = all; the scheme says its parts)
	// Row records a row: what was timed, and the durations.
	Row func(what string, d []time.Duration)
	// Skip says a part could not run here, and why (in the table and the notes).
	Skip func(what string, err error)
	// Note adds a line to the Markdown's notes.
	Note func(string)
	// AtEnd runs f after every row of the run (an idle serve's memory is measured last).
	AtEnd func(f func())
}

// TimeCalls times n calls of p through cs; a refused call is an error.
func (b *BenchRun) TimeCalls(ctx context.Context, n int, cs *mcp.ClientSession, p *mcp.CallToolParams) ([]time.Duration, error) {
	var d []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("%s refused: %v", p.Name, res.Content)
		}
		d = append(d, time.Since(t0))
	}
	return d, nil
}

// GoClient ends a row's name with its client, the Go MCP SDK (the version this build links),
// over transport: every row of the bench states the client that measured it.
func GoClient(transport string) string {
	v := "(version unknown)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/modelcontextprotocol/go-sdk" {
				v = d.Version
			}
		}
	}
	return "; client: Go MCP SDK " + v + ", " + transport
}
