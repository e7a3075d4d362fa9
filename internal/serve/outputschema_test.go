package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"testing"
	"time"
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
