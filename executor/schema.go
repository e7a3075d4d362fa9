package executor

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// InputSchema derives a tool's input schema from its argument struct T, as serve derives the
// output schema from Result, so a tool's schema and the fields it decodes cannot drift apart:
// `json` tags name the properties (omitempty = optional), `jsonschema` tags describe them, and
// unknown properties are refused. patch, if not nil, adds what a Go type cannot say (an enum of
// names, a bound, a description that quotes the policy). A slice is an array, never null.
func InputSchema[T any](patch func(s *jsonschema.Schema)) map[string]any {
	if patch != nil {
		return derive[T](patch)
	}
	t := reflect.TypeFor[T]()
	if m, ok := derived.Load(t); ok {
		return CloneSchema(m.(map[string]any))
	}
	m := derive[T](nil)
	derived.Store(t, m)
	return CloneSchema(m)
}

// derived caches the schemas derived without a patch, per argument type: deriving one by
// reflection is costly, and the file tools' are the same for every scheme and server in a
// process. Callers get a copy (CloneSchema): they may change it.
var derived sync.Map // reflect.Type -> map[string]any

// CloneSchema is a deep copy of a schema decoded from JSON (maps, slices and scalars).
func CloneSchema(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = cloneJSON(v)
	}
	return out
}

func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return CloneSchema(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneJSON(x)
		}
		return out
	default:
		return v // string, float64, bool, nil: immutable
	}
}

func derive[T any](patch func(s *jsonschema.Schema)) map[string]any {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("executor: no JSON schema for %T: %v", *new(T), err)) // a programming error
	}
	for _, p := range s.Properties {
		if len(p.Types) == 2 && p.Types[0] == "null" {
			p.Type, p.Types = p.Types[1], nil
		}
	}
	if patch != nil {
		patch(s)
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic("executor: encode a JSON schema: " + err.Error())
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic("executor: decode a JSON schema: " + err.Error())
	}
	return m
}

// Required lists a derived schema's required properties, sorted (for tests and messages).
func Required(schema map[string]any) []string {
	var out []string
	if r, ok := schema["required"].([]any); ok {
		for _, x := range r {
			out = append(out, fmt.Sprint(x))
		}
	}
	slices.Sort(out)
	return out
}
