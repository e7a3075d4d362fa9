//go:build linux

package hostile

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestEveryCalledToolExists: the attempts here and the scenarios that attack a wrapped server
// (their raw tool-call steps) call only tools the hostile server has: a misspelt tool would make
// a scenario an ERROR, or worse, an attempt that never ran.
func TestEveryCalledToolExists(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := Build(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(bin)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	has := map[string]bool{}
	for _, tl := range res.Tools {
		has[tl.Name] = true
	}
	for _, at := range Attempts {
		if !has[at.Tool] {
			t.Errorf("attempt %s calls %s, which the hostile server does not have", at.ID, at.Tool)
		}
	}
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		for _, st := range s.Steps { // raw tool calls: only a relay scenario's, the wrapped server's tools
			if st.Tool != "" && !has[st.Tool] {
				t.Errorf("scenario %s calls %s, which the hostile server does not have", s.ID, st.Tool)
			}
		}
	}
}
