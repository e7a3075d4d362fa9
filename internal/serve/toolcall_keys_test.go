package serve

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// Arguments holding two keys equal under case folding (the SDK's schema check reads
// "command", encoding/json in the executor the last of "command"/"COMMAND") are refused with
// rule tool.arguments naming the keys, audited, and never reach the tool; the next call runs.
func TestToolArgumentsAmbiguousKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	d := &decodingExec{}
	cs, _ := connect(t, testPolicy(30*time.Second, 2), d, al)
	attacks := map[string]string{
		`{"command":"wc","args":["--version"],"COMMAND":"python3","ARGS":["-c","print(42)"]}`: `"command" and "COMMAND"`,
		`{"command":"wc","command":"python3"}`:                                                `"command" twice`,
		`{"opts":{"env":{"A":"1","a":"2"}}}`:                                                  `"A" and "a"`,
	}
	for args, want := range attacks {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if !r.IsError || !strings.Contains(text(r), RuleToolArguments) || !strings.Contains(text(r), want) {
			t.Fatalf("%s: not refused by %s naming %s: %.300s", args, RuleToolArguments, want, text(r))
		}
	}
	if n := d.ran.Load(); n != 0 {
		t.Fatalf("the tool ran %d times on ambiguous arguments", n)
	}
	refused := 0
	for _, e := range auditLines(t, path, 0) {
		if e.Decision != "refused" || e.Rule != RuleToolArguments || !strings.Contains(e.Reason, audit.RuleAmbiguousKeys) {
			t.Fatalf("audited as %+v", e)
		}
		refused++
	}
	if refused != len(attacks) {
		t.Fatalf("%d refusals audited, want %d", refused, len(attacks))
	}
	if r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "fake", Arguments: json.RawMessage(`{"command":"wc","Args":["x"]}`)}); err != nil || r.IsError {
		t.Fatalf("an unambiguous call: %v %.200s", err, text(r))
	}
}
