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
// when it has none (most have none, and are not decoded again). Only a string that changes is
// written again: everything else (kept tokens and cursors with a lone surrogate or bytes that are
// not UTF-8, numbers, key order, spacing) reaches the client byte for byte, since a client hands
// a cursor or a progress token back to the server as it got it.
func visibleFrame(line []byte) []byte {
	if !mayHoldControl(line) || mutated("wrap-text-controls") || !json.Valid(line) {
		return line
	}
	w := &walker{in: line}
	w.space()
	if !w.object(modeTop) {
		return line
	}
	w.space()
	if w.pos != len(w.in) || !w.changed {
		return line // nothing to show
	}
	return w.flush()
}

// mode is how the walker treats the strings under a value.
type mode int

const (
	modeTop    mode = iota // a message's top level: only its text members are walked
	modeShow               // every string is shown (visible.Text), but under keep
	modeSchema             // a JSON schema: only description and title strings are shown
	modeKeep               // copied as it is
)

// walker copies a JSON text, writing again only the strings whose shown form differs.
// out is nil until the first change: a frame with nothing to show costs no copy.
type walker struct {
	in      []byte
	pos     int
	done    int // in[:done] is accounted for in out
	out     []byte
	changed bool
}

func (w *walker) flush() []byte { return append(w.out, w.in[w.done:]...) }

func (w *walker) space() {
	for w.pos < len(w.in) {
		switch w.in[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// value walks one value in mode m; false when the text is not JSON.
func (w *walker) value(m mode) bool {
	w.space()
	if w.pos >= len(w.in) {
		return false
	}
	switch w.in[w.pos] {
	case '{':
		return w.object(m)
	case '[':
		w.pos++
		w.space()
		if w.pos < len(w.in) && w.in[w.pos] == ']' {
			w.pos++
			return true
		}
		for {
			if !w.value(m) {
				return false
			}
			if more, ok := w.after(']'); !more {
				return ok
			}
		}
	case '"':
		from := w.pos
		if !w.str() {
			return false
		}
		if m == modeShow {
			w.showString(from, w.pos)
		}
		return true
	default:
		// a number, true, false or null: up to the next delimiter
		from := w.pos
		for w.pos < len(w.in) && strings.IndexByte(",]} \t\n\r", w.in[w.pos]) < 0 {
			w.pos++
		}
		return w.pos > from
	}
}

// object walks an object in mode m: each member's value in the mode its key gives it.
func (w *walker) object(m mode) bool {
	if w.pos >= len(w.in) || w.in[w.pos] != '{' {
		return false
	}
	w.pos++
	w.space()
	if w.pos < len(w.in) && w.in[w.pos] == '}' {
		w.pos++
		return true
	}
	for {
		w.space()
		from := w.pos
		if !w.str() {
			return false
		}
		k := string(w.in[from+1 : w.pos-1])
		if strings.IndexByte(k, '\\') >= 0 && json.Unmarshal(w.in[from:w.pos], &k) != nil {
			return false
		}
		// a name is text too: a schema's property names are listed as the tool's parameters
		if (m == modeShow || m == modeSchema) && !mutated("wrap-text-controls-keys") {
			w.showString(from, w.pos)
		}
		w.space()
		if w.pos >= len(w.in) || w.in[w.pos] != ':' {
			return false
		}
		w.pos++
		w.space()
		vm, textKey := memberMode(m, k)
		if textKey && w.pos < len(w.in) && w.in[w.pos] == '"' {
			// a schema's description or title
			from := w.pos
			if !w.str() {
				return false
			}
			w.showString(from, w.pos)
		} else if !w.value(vm) {
			return false
		}
		if more, ok := w.after('}'); !more {
			return ok
		}
	}
}

// after moves past the comma or the closing end that follows an element: more when a comma
// (another element follows), ok when either.
func (w *walker) after(end byte) (more, ok bool) {
	w.space()
	if w.pos >= len(w.in) || (w.in[w.pos] != ',' && w.in[w.pos] != end) {
		return false, false
	}
	w.pos++
	return w.in[w.pos-1] == ',', true
}

// memberMode is the mode of the value under key k in an object walked in mode m, and whether
// that value, when a string, is a schema's text (shown though the schema is kept).
func memberMode(m mode, k string) (mode, bool) {
	switch m {
	case modeTop:
		// Any case of the name: the relay, and a client decoding with Go's encoding/json (as
		// mcp-go does), read "Result" or "PARAMS" as the result or the params.
		if textMember(k) {
			return modeShow, false
		}
		return modeKeep, false
	case modeShow:
		if schema[k] && !mutated("wrap-text-controls-schema-text") {
			return modeSchema, false
		}
		if keep[k] {
			return modeKeep, false
		}
		return modeShow, false
	case modeSchema:
		if schemaData[k] {
			return modeKeep, false
		}
		return modeSchema, k == "description" || k == "title"
	}
	return modeKeep, false
}

// str moves past the string that starts at pos; false when there is none.
func (w *walker) str() bool {
	if w.pos >= len(w.in) || w.in[w.pos] != '"' {
		return false
	}
	for i := w.pos + 1; i < len(w.in); i++ {
		switch w.in[i] {
		case '\\':
			i++
		case '"':
			w.pos = i + 1
			return true
		}
	}
	return false
}

// showString writes in[from:to], a JSON string, again when its shown form differs.
func (w *walker) showString(from, to int) {
	raw := w.in[from:to]
	if !mayHoldControl(raw) {
		return
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return
	}
	t := visible.Text(s)
	if t == s {
		return
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if e.Encode(t) != nil {
		return
	}
	w.out = append(append(w.out, w.in[w.done:from]...), bytes.TrimRight(b.Bytes(), "\n")...)
	w.done, w.changed = to, true
}

// textMember is whether a message's top-level key k holds text a client may print: params,
// result or error, in any case (not jsonrpc, id or method). Since atk38 F1 a frame with such a
// key in another case is dropped before it is shown (protocolKeyCase), so the case here is a
// second guard with no mutant of its own.
func textMember(k string) bool {
	return strings.EqualFold(k, "params") || strings.EqualFold(k, "result") || strings.EqualFold(k, "error")
}

// schema are the kept keys that hold a JSON schema: its descriptions and titles are text a
// client shows (a tool's parameters, listed under it), the rest is kept (showSchema).
var schema = map[string]bool{"inputSchema": true, "outputSchema": true}

// schemaData are the schema keywords whose values are data, not a schema: kept whatever they hold.
var schemaData = map[string]bool{"const": true, "default": true, "enum": true, "examples": true}

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
