package serve

import (
	"context"
	"encoding/json"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// decodingExec has one tool, "fake", that decodes its arguments generically, as the real
// executors' argument decoding does: the cost of a huge argument list lands here.
type decodingExec struct {
	fakeExec
	ran atomic.Int32
}

func (d *decodingExec) Tools() []executor.Tool {
	return []executor.Tool{{Name: "fake", Description: "test tool", InputSchema: map[string]any{"type": "object"},
		Run: func(ctx context.Context, c executor.Call) (*executor.Result, error) {
			d.ran.Add(1)
			var v map[string]any
			if err := json.Unmarshal(c.Args, &v); err != nil {
				return nil, executor.Refuse("tool.arguments", "%v", err)
			}
			if l, ok := v["args"].([]any); ok && len(l) > 256 {
				return nil, executor.Refuse("allowlist.max_args", "at most 256 arguments")
			}
			return &executor.Result{Stdout: "ran"}, nil
		}}}
}

func totalAlloc() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// A call naming a tool this server does not have, with a 1 MB name, is answered with an
// error quoting at most MaxEchoedName bytes of it, and audited refused (rule tool.name).
func TestUnknownToolNameIsClippedAndAudited(t *testing.T) {
	cs, path := auditedSession(t)
	name := strings.Repeat("N", 1<<20)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"echo": "x"}})
	if err == nil {
		t.Fatal("a call to an unknown tool was answered")
	}
	t.Logf("error: %d bytes: %.300s", len(err.Error()), err.Error())
	if len(err.Error()) > MaxEchoedName+500 || !strings.Contains(err.Error(), "unknown tool") || !strings.Contains(err.Error(), "1048576 bytes") ||
		!strings.Contains(err.Error(), "fake") {
		t.Fatalf("unknown tool error: %d bytes: %.400s", len(err.Error()), err.Error())
	}
	es := auditLines(t, path, 0)
	if len(es) != 1 || es[0].Decision != "refused" || es[0].Rule != RuleToolName || !strings.HasPrefix(es[0].Tool, "NNN") || es[0].Session == "" {
		t.Fatalf("unknown tool audited as %+v", es)
	}
	r, err := call(t, context.Background(), cs, map[string]any{"echo": "still here"})
	if err != nil || !strings.Contains(text(r), "still here") {
		t.Fatalf("next call: %v", err)
	}
}

// Arguments over the JSON shape bound (four million "" in 12 MB, or nesting deeper than
// MaxArgDepth) are refused with rule tool.arguments before anything decodes them: fast, with
// little allocation, the executor never sees them, the refusal is audited, and the next call is
// answered.
func TestToolArgumentsShapeBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	d := &decodingExec{}
	cs, _ := connect(t, testPolicy(30*time.Second, 2), d, al)
	const n = 2 << 20 // the attacker sent 4M in 12 MB; 2M keeps the test quick under -race
	many := json.RawMessage(`{"args":[` + strings.Repeat(`"",`, n-1) + `""]}`)
	measure := func(name string, args json.RawMessage) (*mcp.CallToolResult, uint64) {
		runtime.GC()
		a0, t0 := totalAlloc(), time.Now()
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: args})
		took, alloc := time.Since(t0), totalAlloc()-a0
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Logf("%s (%d bytes): answered in %s, %d MiB allocated (client and server): %.200s", name, len(args), took.Round(time.Millisecond), alloc>>20, text(r))
		return r, alloc
	}
	// The SDK copies a message several times on its way (client encode, transport, params):
	// the baseline is a call of the same size with one value, which the executor decodes.
	_, base := measure("baseline: one string of the same size", json.RawMessage(`{"pad":"`+strings.Repeat("x", len(many)-10)+`"}`))
	ranBefore := d.ran.Load()
	attacks := []struct {
		name string
		args json.RawMessage
	}{
		{"2M empty strings", many},
		{"deep nesting", json.RawMessage(`{"args":` + strings.Repeat("[", MaxArgDepth+1) + strings.Repeat("]", MaxArgDepth+1) + `}`)},
	}
	for _, a := range attacks {
		r, alloc := measure(a.name, a.args)
		if !r.IsError || !strings.Contains(text(r), RuleToolArguments) {
			t.Fatalf("%s: not refused by %s: %.300s", a.name, RuleToolArguments, text(r))
		}
		if d.ran.Load() != ranBefore {
			t.Fatalf("%s: the executor got the arguments", a.name)
		}
		// Decoding two million values would take several times the baseline.
		if alloc > base+base/2 {
			t.Fatalf("%s: %d MiB allocated to refuse it, baseline %d MiB", a.name, alloc>>20, base>>20)
		}
	}
	heap := heapInUse()
	t.Logf("heap in use after the attacks: %d MiB", heap>>20)
	if heap > hostileHeapBound {
		t.Fatalf("heap in use %d MiB, bound %d MiB", heap>>20, hostileHeapBound>>20)
	}
	var refused int
	for _, e := range auditLines(t, path, 0) {
		if e.Rule == RuleToolArguments && e.Decision == "refused" {
			refused++
		}
	}
	if refused != len(attacks) {
		t.Fatalf("%d tool.arguments refusals audited, want %d", refused, len(attacks))
	}
	r, err := call(t, context.Background(), cs, map[string]any{"echo": "x"})
	if err != nil || r.IsError {
		t.Fatalf("next call: %v %.200s", err, text(r))
	}
}
