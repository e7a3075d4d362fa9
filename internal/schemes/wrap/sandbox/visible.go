package sandbox

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// Text a client prints shows terminal controls instead of doing them, as serve's own results do
// (internal/visible): clients that run in a terminal print a tool's result, its description, a
// prompt or the server's log message there, and the wrapped server is the party wrap does not
// trust: an OSC 52 in its answer would write the user's clipboard. Every string under a server
// message's params, result and error is shown with visible.Text, except what must come back to
// the server byte for byte or is not text for a reader (keep).

// keep are the keys whose values are left as they are: schemas (a pattern may name controls;
// their descriptions and titles are shown all the same, showSchema),
// structured results (data for programs; the text content beside them is shown), tokens and
// ids a client sends back.
var keep = map[string]bool{"inputSchema": true, "outputSchema": true, "structuredContent": true, "_meta": true,
	"progressToken": true, "requestId": true, "cursor": true, "nextCursor": true}

// visibleFrame is a server frame with the terminal controls in its text shown; the frame itself
// when it has none (most have none, and are not decoded again).
func visibleFrame(line []byte) []byte {
	if !mayHoldControl(line) || mutated("wrap-text-controls") {
		return line
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(line, &top) != nil {
		return line
	}
	changed := false
	for k, raw := range top {
		// Any case of the name: the relay, and a client decoding with Go's encoding/json (as
		// mcp-go does), read "Result" or "PARAMS" as the result or the params.
		if !textMember(k) || !mayHoldControl(raw) {
			continue
		}
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		var v any
		if d.Decode(&v) != nil {
			return line
		}
		v, ok := show(v)
		if !ok {
			continue
		}
		var b bytes.Buffer
		e := json.NewEncoder(&b)
		e.SetEscapeHTML(false)
		if e.Encode(v) != nil {
			return line
		}
		top[k], changed = bytes.TrimRight(b.Bytes(), "\n"), true
	}
	if !changed {
		return line
	}
	out, err := json.Marshal(top)
	if err != nil {
		return line
	}
	return out
}

// textMember is whether a message's top-level key k holds text a client may print: params,
// result or error, in any case (not jsonrpc, id or method).
func textMember(k string) bool {
	if mutated("wrap-text-controls-key-case") {
		return k == "params" || k == "result" || k == "error"
	}
	return strings.EqualFold(k, "params") || strings.EqualFold(k, "result") || strings.EqualFold(k, "error")
}

// show is v with visible.Text applied to every string outside keep; false when nothing changed.
func show(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		s := visible.Text(x)
		return s, s != x
	case []any:
		changed := false
		for i := range x {
			if y, ok := show(x[i]); ok {
				x[i], changed = y, true
			}
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, y := range x {
			if schema[k] && !mutated("wrap-text-controls-schema-text") {
				if y, ok := showSchema(y); ok {
					x[k], changed = y, true
				}
				continue
			}
			if keep[k] {
				continue
			}
			if y, ok := show(y); ok {
				x[k], changed = y, true
			}
		}
		return x, changed
	}
	return v, false
}

// schema are the kept keys that hold a JSON schema: its descriptions and titles are text a
// client shows (a tool's parameters, listed under it), the rest is kept (showSchema).
var schema = map[string]bool{"inputSchema": true, "outputSchema": true}

// schemaData are the schema keywords whose values are data, not a schema: kept whatever they hold.
var schemaData = map[string]bool{"const": true, "default": true, "enum": true, "examples": true}

// showSchema is the schema v with visible.Text applied to every string under a description or
// title keyword, the rest (patterns, names, formats, data) as it was; false when nothing changed.
func showSchema(v any) (any, bool) {
	switch x := v.(type) {
	case []any:
		changed := false
		for i := range x {
			if y, ok := showSchema(x[i]); ok {
				x[i], changed = y, true
			}
		}
		return x, changed
	case map[string]any:
		changed := false
		for k, y := range x {
			if schemaData[k] {
				continue
			}
			if s, isText := y.(string); isText && (k == "description" || k == "title") {
				if t := visible.Text(s); t != s {
					x[k], changed = t, true
				}
				continue
			}
			if y, ok := showSchema(y); ok {
				x[k], changed = y, true
			}
		}
		return x, changed
	}
	return v, false
}

// mayHoldControl is false only when JSON text surely holds no control visible.Text would change:
// no \u00XX escape, no \b, \f or \r escape, no DEL and no UTF-8 C1 control.
func mayHoldControl(b []byte) bool {
	if bytes.Contains(b, []byte(`\u00`)) || bytes.Contains(b, []byte(`\b`)) || bytes.Contains(b, []byte(`\f`)) ||
		bytes.Contains(b, []byte(`\r`)) || bytes.IndexByte(b, 0x7f) >= 0 {
		return true
	}
	for i := bytes.IndexByte(b, 0xc2); i >= 0 && i+1 < len(b); {
		if b[i+1] >= 0x80 && b[i+1] <= 0x9f {
			return true
		}
		j := bytes.IndexByte(b[i+1:], 0xc2)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}
