package executor

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type sampleArgs struct {
	Command string   `json:"command" jsonschema:"which program"`
	Args    []string `json:"args,omitempty" jsonschema:"arguments"`
	Timeout float64  `json:"timeout,omitempty"`
}

// A derived input schema says what the hand-written ones said: object, the json names, the
// descriptions, required = the fields without omitempty, no other properties, a slice an
// array (never null); patch adds what a type cannot say.
func TestInputSchema(t *testing.T) {
	s := InputSchema[sampleArgs](func(s *jsonschema.Schema) {
		s.Properties["command"].Enum = []any{"wc", "sort"}
		s.Properties["args"].MaxItems = jsonschema.Ptr(256)
	})
	b, _ := json.Marshal(s)
	var got struct {
		Type       string         `json:"type"`
		Required   []string       `json:"required"`
		Additional *bool          `json:"additionalProperties"`
		Properties map[string]any `json:"properties"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Type != "object" || !slices.Equal(got.Required, []string{"command"}) || got.Additional == nil || *got.Additional {
		t.Errorf("schema: %s", b)
	}
	args, _ := got.Properties["args"].(map[string]any)
	cmd, _ := got.Properties["command"].(map[string]any)
	if args["type"] != "array" || args["maxItems"] != float64(256) || cmd["description"] != "which program" || len(cmd["enum"].([]any)) != 2 {
		t.Errorf("properties: %s", b)
	}
	if !slices.Equal(Required(s), []string{"command"}) {
		t.Errorf("Required: %v", Required(s))
	}
}

// A schema derived without a patch is derived once per type, and each caller gets its own copy:
// changing one (a scheme adding to it) changes neither the cache nor another caller's.
func TestInputSchemaCachedCopies(t *testing.T) {
	a := InputSchema[ReadFileArgs](nil)
	b := InputSchema[ReadFileArgs](nil)
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("two derivations differ:\n%v\n%v", a, b)
	}
	a["title"] = "changed"
	a["properties"].(map[string]any)["path"].(map[string]any)["description"] = "changed"
	c := InputSchema[ReadFileArgs](nil)
	if !reflect.DeepEqual(b, c) || c["title"] == "changed" {
		t.Errorf("a caller's change reached the cache:\n%v", c)
	}
}
