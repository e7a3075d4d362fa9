package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

var update = flag.Bool("update", false, "rewrite outputschema.json from executor.Result")

// The output schema serve embeds is the one derived from executor.Result: the two cannot drift.
func TestOutputSchemaFileMatchesResult(t *testing.T) {
	derived, err := json.MarshalIndent(OutputSchema(), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	derived = append(derived, '\n')
	if *update {
		if err := os.WriteFile("outputschema.json", derived, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(outputSchemaJSON, derived) {
		t.Fatalf("outputschema.json differs from the schema of executor.Result: go test ./internal/serve -run OutputSchemaFile -update\nwant:\n%s", derived)
	}
}

// Every listed tool carries that schema as its outputSchema.
func TestListedToolsCarryTheOutputSchema(t *testing.T) {
	cs, _ := connect(t, testPolicy(5*time.Second, 2), &fakeExec{}, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", res, err)
	}
	want, _ := json.Marshal(OutputSchema())
	var w any
	json.Unmarshal(want, &w)
	for _, tl := range res.Tools {
		got, _ := json.Marshal(tl.OutputSchema)
		var g any
		json.Unmarshal(got, &g)
		gb, _ := json.Marshal(g)
		wb, _ := json.Marshal(w)
		if !bytes.Equal(gb, wb) {
			t.Errorf("tool %s: outputSchema %s, want %s", tl.Name, got, want)
		}
	}
}

// Every listed tool carries its executor's own input schema, not the stand-in the SDK is given
// (listSchemas), over a real client session.
func TestListedToolsCarryTheirSchemas(t *testing.T) {
	ex := richSchemaExec{&fakeExec{}}
	cs, _ := connect(t, testPolicy(5*time.Second, 2), ex, nil)
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(res.Tools) == 0 {
		t.Fatalf("tools/list: %v %v", res, err)
	}
	norm := func(v any) string {
		b, _ := json.Marshal(v)
		var x any
		json.Unmarshal(b, &x)
		b, _ = json.Marshal(x)
		return string(b)
	}
	want := map[string]string{}
	for _, tl := range ex.Tools() {
		want[tl.Name] = norm(tl.InputSchema)
	}
	for _, tl := range res.Tools {
		if got := norm(tl.InputSchema); got != want[tl.Name] {
			t.Errorf("tool %s: inputSchema %s, want %s", tl.Name, got, want[tl.Name])
		}
		if got := norm(tl.InputSchema); got == norm(schemaStandIn) {
			t.Errorf("tool %s: the stand-in schema was listed", tl.Name)
		}
	}
	if len(res.Tools) != len(want) {
		t.Errorf("%d tools listed, the executor has %d", len(res.Tools), len(want))
	}
}

// richSchemaExec is fakeExec with an input schema unlike the stand-in.
type richSchemaExec struct{ *fakeExec }

func (r richSchemaExec) Tools() []executor.Tool {
	ts := r.fakeExec.Tools()
	ts[0].InputSchema = map[string]any{"type": "object", "additionalProperties": false,
		"properties": map[string]any{"refuse": map[string]any{"type": "string"}}}
	return ts
}
