package serve

import (
	"encoding/json"
	"reflect"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// answerSizeOf is what serve holds for a tools/call answer while it is encoded and written:
// heldPerAnswerByte times an upper estimate of the JSON the answer encodes to, taken from the
// answer outcome() made, whole: its content (text, pictures, resources) and its structured
// result, every string as Go's encoder escapes it, every []byte as base64, every field's name
// and punctuation (an omitted empty one too). Counting the executor's result by the parts a
// rule named left out what no rule named: the workspace lists, a tool error's result, a file
// name's escapes, an SVG's text (attack round atk44b F1: a 9 MB answer counted 1 KiB).
func answerSizeOf(out *mcp.CallToolResult) int64 {
	if mutated("unread-answer-from-result") {
		return heldPerAnswerByte * 1024
	}
	return heldPerAnswerByte * (1024 + jsonUpper(reflect.ValueOf(out), 0))
}

var (
	rawMessageType = reflect.TypeFor[json.RawMessage]()
	timeType       = reflect.TypeFor[time.Time]()
)

// jsonUpper is an upper estimate of v's JSON length (encoding/json's rules). A type with its
// own MarshalJSON is read by its fields as well (the SDK's contents add their "type" member: 32
// bytes a struct cover it); depth bounds a cycle, which no answer has.
func jsonUpper(v reflect.Value, depth int) int64 {
	if !v.IsValid() || depth > 32 {
		return 4
	}
	switch v.Type() {
	case rawMessageType:
		return int64(v.Len()) + 4
	case timeType:
		return 40
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return 4
		}
		return jsonUpper(v.Elem(), depth+1)
	case reflect.String:
		return jsonLen(v.String()) + 2
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			return 4
		}
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return int64(v.Len()+2)/3*4 + 2 // base64
		}
		n := int64(2)
		for i := range v.Len() {
			n += 1 + jsonUpper(v.Index(i), depth+1)
		}
		return n
	case reflect.Map:
		n := int64(2)
		for it := v.MapRange(); it.Next(); {
			n += 4 + jsonUpper(it.Key(), depth+1) + jsonUpper(it.Value(), depth+1)
		}
		return n
	case reflect.Struct:
		return structUpper(v, depth)
	case reflect.Bool:
		return 5
	default: // numbers
		return 24
	}
}

// structUpper is jsonUpper of a struct: each exported field the encoder writes (json:"-" is
// not), its name (the tag's, else the field's, at most as long as both) and its value.
func structUpper(v reflect.Value, depth int) int64 {
	n := int64(32)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		n += int64(len(f.Name)+len(tag)) + 4 + jsonUpper(v.Field(i), depth+1)
	}
	return n
}
