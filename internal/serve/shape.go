package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/httpbound"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	sjson "github.com/segmentio/encoding/json"
)

// MaxMessageValues and MaxMessageDepth bound the JSON shape of a whole inbound message, checked
// on its raw bytes before anything decodes it (the SDK decodes every part of a message, _meta
// and ids included: 14 MB of zeros in _meta took serve to 543 MB). A call's arguments have
// their own, tighter bound inside it (MaxArgValues, MaxArgDepth).
const (
	MaxMessageValues = bounds.MaxMessageValues
	MaxMessageDepth  = bounds.MaxMessageDepth
)

// messageShape says why raw, one JSON-RPC message, is refused before it is decoded ("" = not).
func messageShape(raw []byte) string {
	if mutated("message-shape") {
		return ""
	}
	if err := audit.CheckShape(raw, MaxMessageValues, MaxMessageDepth); err != nil {
		return fmt.Sprintf("message refused unread: %v (at most %d JSON values, %d levels deep in one message)", err, MaxMessageValues, MaxMessageDepth)
	}
	return ""
}

// MaxIDBytes bounds a message's id as written; MaxOtherMessage a whole message that is not a
// tools/call (see internal/bounds).
const (
	MaxIDBytes      = bounds.MaxIDBytes
	MaxOtherMessage = bounds.MaxOtherMessage
)

// probe is what judgeMessage reads of a message: its top-level members as written (the last of
// a repeated key, as the SDK takes it), params not copied.
type probe struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  rawSpan         `json:"params"`
	Result  rawSpan         `json:"result"`
	Error   rawSpan         `json:"error"`
	object  bool            // raw is a JSON object
}

// judgeMessage says why raw, one JSON-RPC message, is refused before the SDK decodes it (why
// "" = not), with the error code and the id to answer with (nil: none usable). Beyond the shape
// bound it refuses what the SDK would echo unbounded: an id over MaxIDBytes (every answer
// carries it), a message other than a tools/call over MaxOtherMessage (its errors quote the
// method, a name, a URI or the whole params), and a tools/call whose params do not decode as
// the SDK's (its error quotes them %q-quoted: five times a line of 0x7f bytes).
//
// raw is read as the SDK reads it (sdkDecode): keys match fields only as written. Go's
// encoding/json also matched "Method" and "Id", the last such key winning, so serve judged a
// message the SDK never saw: {"method":"tools/list","Method":"tools/call",…} passed as a
// tools/call and its 3 MiB params came back %q-quoted (15 MiB over HTTP), {"id":"<8 MiB>",
// "Id":8,…} had its 8 MiB id echoed. The line is decoded once, its params a second time only
// for a tools/call, and params are not copied. It returns what it read of raw too (valid while raw is).
func judgeMessage(raw []byte) (p probe, id json.RawMessage, code int64, why string) {
	p.object = sdkDecode(raw, &p) == nil
	id = p.ID
	if len(id) > MaxIDBytes && !mutated("message-echo") {
		return p, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("the message's id is %d bytes written, over the %d-byte bound of an id: use a number or a short string", len(id), MaxIDBytes)
	}
	if why := messageShape(raw); why != "" {
		return p, id, jsonrpc.CodeInvalidRequest, why
	}
	if mutated("message-echo") {
		return p, id, 0, ""
	}
	if why := idProblem(id); why != "" {
		return p, nil, jsonrpc.CodeInvalidRequest, why // an id that cannot be echoed as sent: none
	}
	if len(p.Method) > 0 && p.Method[0] != '"' && !mutated("message-method-go-words") {
		return p, id, jsonrpc.CodeInvalidRequest, "invalid request: the message's method must be a string, not " + jsonKind(p.Method[0])
	}
	var method string
	if len(p.Method) <= 128 { // "tools/call" even written all in \u escapes is shorter
		_ = sdkDecode(p.Method, &method)
	}
	if method != "tools/call" && len(raw) > MaxOtherMessage {
		return p, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message of %d bytes refused unread: only a tools/call may be over %d bytes", len(raw), MaxOtherMessage)
	}
	if notifications[method] && len(id) > 0 && !bytes.Equal(id, []byte("null")) && !mutated("message-notification-id") {
		// the SDK's jsonrpc2 acts on a notifications/cancelled before it judges the id: one
		// naming its own id cancelled itself, answered -32603 "context canceled" (atk49b)
		return p, id, jsonrpc.CodeInvalidRequest, fmt.Sprintf("invalid request: %s is a notification, which carries no id: send it without one (a notification is never answered)", method)
	}
	if why := paramsNotObject(p, method); why != "" {
		return p, id, jsonrpc.CodeInvalidParams, why // none, or null: the SDK's -32600 or "handling 'tools/call'"
	}
	if why := paramsProblemOf(p, method); why != "" {
		return p, id, jsonrpc.CodeInvalidParams, why
	}
	return p, id, 0, ""
}

// notifications are the notifications this server takes (go-sdk v1.8.0's): a message so named
// with an id is an invalid request.
var notifications = map[string]bool{
	"notifications/cancelled": true, "notifications/initialized": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

// methodParamsOf makes, for each method in methodParams, what the SDK decodes its params into
// (initialize's capabilities left to the SDK, which reads them as a type of its own).
var methodParamsOf = map[string]func() any{
	"initialize": func() any {
		return &struct {
			mcp.InitializeParams
			Capabilities json.RawMessage `json:"capabilities"`
		}{}
	},
	"tools/call":               func() any { return &mcp.CallToolParamsRaw{} },
	"prompts/get":              func() any { return &mcp.GetPromptParams{} },
	"resources/read":           func() any { return &mcp.ReadResourceParams{} },
	"completion/complete":      func() any { return &mcp.CompleteParams{} },
	"logging/setLevel":         func() any { return &logLevelParams{} },
	"subscriptions/listen":     func() any { return &mcp.SubscriptionsListenParams{} },
	"ping":                     func() any { return &mcp.PingParams{} },
	"tools/list":               func() any { return &mcp.ListToolsParams{} },
	"prompts/list":             func() any { return &mcp.ListPromptsParams{} },
	"resources/list":           func() any { return &mcp.ListResourcesParams{} },
	"resources/templates/list": func() any { return &mcp.ListResourceTemplatesParams{} },
}

// logLevelParams are logging/setLevel's params as the SDK's SetLoggingLevelParams (deprecated
// from protocol 2026-07-28, still served) decodes them.
type logLevelParams struct {
	Meta  mcp.Meta `json:"_meta,omitempty"`
	Level string   `json:"level"`
}

// loggingLevels are MCP's log levels (RFC 5424's), the only ones logging/setLevel takes.
var loggingLevels = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// paramsProblemOf says why a request's params object is refused before the SDK decodes it
// ("" = not): a member of the wrong JSON type, in JSON's words (the SDK's error names Go's types:
// `into Go struct field mcp.ListToolsParams.cursor of type string`), and a log level MCP does
// not have (the SDK answered {} to logging/setLevel {"level":"nope"}: atk49b). A tools/call's
// params that do not decode are quoted %q by the SDK, five times their size (judgeMessage).
func paramsProblemOf(p probe, method string) string {
	if len(p.Params) == 0 || bytes.Equal(p.Params, []byte("null")) {
		return ""
	}
	if method != "tools/call" && (len(p.ID) == 0 || bytes.Equal(p.ID, []byte("null"))) {
		return "" // a notification's are left to the SDK, which answers none (a tools/call's are judged: its errors quote them)
	}
	newParams, known := methodParamsOf[method]
	if !known || method != "tools/call" && mutated("params-type-go-words") {
		return ""
	}
	params := newParams()
	if err := sdkDecode(p.Params, params); err != nil {
		if method == "tools/call" {
			return "invalid params of tools/call: " + paramsProblem(err) + `: tools/call takes {"name": "<tool>", "arguments": {…}}`
		}
		return fmt.Sprintf("invalid params of %s: %s", method, paramsProblem(err))
	}
	if lp, ok := params.(*logLevelParams); ok && !slices.Contains(loggingLevels, lp.Level) && !mutated("params-log-level-any") {
		return fmt.Sprintf("invalid params of logging/setLevel: params.level must be one of %s, not %s", strings.Join(loggingLevels, ", "), ClipText(strconv.Quote(string(lp.Level)), 64))
	}
	return ""
}

// paramsNotObject says why a request's params are refused before the SDK decodes them: every
// MCP method takes an object (or none), and the SDK's error for another names its Go types
// (trial46 F6); a method that needs params, sent none or null, got -32600 or -32603 from the SDK
// where JSON-RPC says -32602 (atk48b F5). Only the methods this server answers are judged: any
// other is the SDK's -32601, whatever its params. A notification's are left to the SDK, which
// answers none.
func paramsNotObject(p probe, method string) string {
	if len(p.ID) == 0 || bytes.Equal(p.ID, []byte("null")) || mutated("params-go-words") {
		return ""
	}
	need, known := methodParams[method]
	if !known && !mutated("params-unknown-method") {
		return ""
	}
	if len(p.Params) == 0 || bytes.Equal(p.Params, []byte("null")) {
		if need && !mutated("params-required-code") {
			return fmt.Sprintf("invalid params of %s: params are required (a JSON object)", method)
		}
		return ""
	}
	if p.Params[0] == '{' {
		return ""
	}
	if method == "tools/call" {
		return "invalid params of tools/call: params must be an object, not " + jsonKind(p.Params[0]) + `: tools/call takes {"name": "<tool>", "arguments": {…}}`
	}
	return fmt.Sprintf("invalid params of %s: params must be a JSON object, not %s", ClipText(method, 128), jsonKind(p.Params[0]))
}

// methodParams are the request methods this server answers (the go-sdk v1.8.0 server's, less
// those it answers -32601 for here: resources/subscribe and unsubscribe, server/discover), each
// with whether it needs params (TestStdioErrorsInJSONRPCWords checks both against the SDK).
var methodParams = map[string]bool{
	"initialize": true, "tools/call": true, "prompts/get": true, "resources/read": true,
	"completion/complete": true, "logging/setLevel": true, "subscriptions/listen": true,
	"ping": false, "tools/list": false, "prompts/list": false, "resources/list": false, "resources/templates/list": false,
}

// idProblem says why a message's id cannot be answered as sent ("" = it can): JSON-RPC's id is
// a string, a number or null, and the SDK reads a number as a double kept as an int64, so 1.5
// was answered as 1, 9007199254740993 as 9007199254740992, 12345678901234567890 as
// -9223372036854775808, and true or {} got an error in Go's words (atk48b F4, F5). An integer
// within ±(2^53−1), as wrap takes (relay ids), is echoed as the number it is (-0 as 0).
func idProblem(id json.RawMessage) string {
	if len(id) == 0 || bytes.Equal(id, []byte("null")) || mutated("message-id-as-sdk") {
		return ""
	}
	if id[0] == '"' {
		if !stringKeepsText(id) && !mutated("message-id-string-any") {
			return `invalid request: the message's id is a string that is not Unicode text (it holds bytes that are not UTF-8, or a \ud800-\udfff escape that is not half of a surrogate pair), which the answer would carry back as another string ("\ufffd"): use a string of UTF-8 text or an integer`
		}
		return ""
	}
	if c := id[0]; c == '-' || c >= '0' && c <= '9' {
		if n, err := strconv.ParseInt(string(id), 10, 64); err == nil && n >= -(1<<53-1) && n <= 1<<53-1 {
			return ""
		}
		return fmt.Sprintf("invalid request: the message's id %s is not an integer within ±(2^53−1) (what a JSON number holds exactly): use a string or such an integer, which the answer carries back as sent", ClipText(string(id), 64))
	}
	return "invalid request: the message's id must be a string, an integer or null, not " + jsonKind(id[0])
}

// stringKeepsText reports whether s, a JSON string as written, decodes to text that encodes
// back to the same string: Go decodes bytes that are not UTF-8 and a lone surrogate escape
// (\ud800, \udfff) each to U+FFFD, so "\ud800" and "\udfff" were answered as one id, "\ufffd"
// (atk49b F2).
func stringKeepsText(s []byte) bool {
	if !utf8.Valid(s) {
		return false
	}
	high := false // the escape before was a high surrogate, which a low one must follow
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			if high {
				return false
			}
			continue
		}
		i++
		if i >= len(s) || s[i] != 'u' {
			if high {
				return false
			}
			continue
		}
		if i+4 >= len(s) {
			return false
		}
		r, err := strconv.ParseUint(string(s[i+1:i+5]), 16, 16)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xd800 && r < 0xdc00:
			if high {
				return false
			}
			high = true
		case r >= 0xdc00 && r < 0xe000:
			if !high {
				return false
			}
			high = false
		default:
			if high {
				return false
			}
		}
	}
	return !high
}

// paramsProblem says what a request's params decode error found in JSON's words, not the
// SDK's Go types (`cannot unmarshal … into Go value of type mcp.CallToolParamsRaw`).
func paramsProblem(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || te.Type == nil || mutated("params-go-words") {
		return ClipText(err.Error(), 512)
	}
	at := "params"
	if te.Field != "" {
		at += "." + ClipText(te.Field, 128)
	}
	var got byte
	if v, err := strconv.Unquote(te.Value); err == nil && v != "" {
		got = v[0]
	}
	want := "an object"
	switch te.Type.Kind() {
	case reflect.String:
		want = "a string"
	case reflect.Slice, reflect.Array:
		want = "an array"
	case reflect.Bool:
		want = "a boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		want = "a number"
	}
	return fmt.Sprintf("%s must be %s, not %s", at, want, jsonKind(got))
}

// jsonKind names the JSON value that starts with c.
func jsonKind(c byte) string {
	switch {
	case c == '"':
		return "a string"
	case c == '[':
		return "an array"
	case c == '{':
		return "an object"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		return "a number"
	}
	return "another value"
}

// message is the JSON-RPC message raw (which p was read from) is, as jsonrpc.DecodeMessage
// makes it, without decoding raw again: a request's members other than params are decoded by
// DecodeMessage from a message of those members alone, and params (most of a large tools/call)
// is copied once. A 16 MiB line took 65 MB to decode twice; this way, with the judging, ~32 MB.
func (p *probe) message(raw []byte) (jsonrpc.Message, error) {
	if !p.object || len(p.Method) == 0 || mutated("stdio-decode-once") {
		return jsonrpc.DecodeMessage(raw)
	}
	if req, ok := p.request(); ok {
		return req, nil
	}
	small := []byte{'{'}
	for _, m := range []struct {
		key string
		v   []byte
	}{{"jsonrpc", p.JSONRPC}, {"id", p.ID}, {"method", p.Method}, {"result", p.Result}, {"error", p.Error}} {
		if m.v == nil {
			continue
		}
		if len(small) > 1 {
			small = append(small, ',')
		}
		small = append(append(append(small, '"'), m.key...), `":`...)
		small = append(small, m.v...)
	}
	msg, err := jsonrpc.DecodeMessage(append(small, '}'))
	if err != nil {
		return nil, err
	}
	if req, ok := msg.(*jsonrpc.Request); ok && p.Params != nil {
		req.Params = json.RawMessage(bytes.Clone(p.Params))
	}
	return msg, nil
}

// request is the request p was read from, as jsonrpc.DecodeMessage makes it, its members
// decoded one by one as the SDK decodes them (ok false: one does not decode, or is not what a
// request needs; DecodeMessage then says why in its own words). DecodeMessage's decoder takes a
// 32 KB buffer for each value it decodes, two for a request: most of what serve allocated for
// a call, and a collection every twenty-odd calls (docs/perf-allowlist.md, thirteenth round).
func (p *probe) request() (*jsonrpc.Request, bool) {
	if p.Result != nil || p.Error != nil || mutated("stdio-decode-sdk") {
		return nil, false // a request with a response's members: DecodeMessage judges them
	}
	var version, method string
	var id any
	if sdkDecode(p.JSONRPC, &version) != nil || version != "2.0" || sdkDecode(p.Method, &method) != nil {
		return nil, false
	}
	if p.ID != nil && sdkDecode(p.ID, &id) != nil {
		return nil, false
	}
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		return nil, false
	}
	req := &jsonrpc.Request{ID: rid, Method: method}
	if p.Params != nil {
		req.Params = json.RawMessage(bytes.Clone(p.Params))
	}
	return req, true
}

// sdkDecode decodes b into v as the go-sdk decodes a message and its params (its internal/json:
// segmentio's decoder, keys matching struct fields only as written, not case-folded as Go's
// encoding/json does), so serve judges the message the SDK will handle.
func sdkDecode(b []byte, v any) error {
	if mutated("message-keys-as-sdk") {
		return json.Unmarshal(b, v)
	}
	_, err := sjson.Parse(b, v, sjson.DontMatchCaseInsensitiveStructFields)
	return err
}

// rawSpan is a JSON value as written, not copied: it aliases the bytes decoded, so it is used
// only while they are (within judgeMessage).
type rawSpan []byte

func (s *rawSpan) UnmarshalJSON(b []byte) error {
	*s = b
	return nil
}

// checkHTTPMessage reads a POST's body (already bounded by the body limit and the server-wide
// budget) and refuses, before the SDK decodes it, a JSON-RPC batch (one request could carry
// thousands of calls past every per-request bound) or a message over the shape bound. It puts
// the body back for the handler and reports whether the request goes on.
func checkHTTPMessage(w http.ResponseWriter, r *http.Request, maxBody int64) bool {
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return true
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	r.Body.Close()
	if err != nil {
		// a body cut at its deadline (a slow drip) or broken off: the connection goes too
		httpbound.CloseRefused(w, refusedDrain)
		if errors.Is(err, httpbound.ErrBodyBudget) {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "service unavailable: "+err.Error()+" (the request bodies serve holds are at their bound for all requests at once)", http.StatusServiceUnavailable)
			return false
		}
		http.Error(w, "bad request: the body could not be read: "+err.Error(), http.StatusBadRequest)
		return false
	}
	if int64(len(body)) > maxBody {
		httpbound.CloseRefused(w, refusedDrain)
		http.Error(w, fmt.Sprintf("request body over %d bytes", maxBody), http.StatusRequestEntityTooLarge)
		return false
	}
	refuse := func(id json.RawMessage, msg string) bool {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(bytes.TrimSuffix(errorLine(id, jsonrpc.CodeInvalidRequest, msg), []byte("\n")))
		return false
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '[' && !mutated("http-no-batch") {
		return refuse(nil, "JSON-RPC batches are not supported: send one message per request")
	}
	if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) && !mutated("http-trailing-data") {
		// the SDK decodes the first value of a body and drops what follows it (a second
		// message, garbage) unanswered; stdio answers such a line -32700 (atk49b F4)
		if why := messageShape(body); why != "" {
			return refuse(nil, why) // valid JSON past Go's 10,000-level check: serve's bound says so
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		id, _, _ := scanRequest(body[:min(len(body), oversizeHead)]) // as stdio answers such a line
		w.Write(bytes.TrimSuffix(errorLine(id, jsonrpc.CodeParseError, "parse error: the body is not one valid JSON value: send one JSON-RPC message per request, with nothing after it but whitespace"), []byte("\n")))
		return false
	}
	p, id, code, why := judgeMessage(body)
	if why != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		w.Write(bytes.TrimSuffix(errorLine(id, int(code), why), []byte("\n")))
		return false
	}
	r.Body, r.ContentLength = &readBody{Reader: bytes.NewReader(body), raw: body, call: p.isToolsCall()}, int64(len(body))
	return true
}

// readBody is a POST body checkHTTPMessage has read: the handler reads it again, and the
// session bound asks what it is without a second copy.
type readBody struct {
	*bytes.Reader
	raw  []byte
	call bool // a tools/call with an id
}

// isToolsCall reports whether the message judged is a tools/call request (one with an id).
func (p *probe) isToolsCall() bool {
	var method string
	if len(p.Method) > 128 || len(p.ID) == 0 || bytes.Equal(p.ID, []byte("null")) || sdkDecode(p.Method, &method) != nil {
		return false
	}
	return method == "tools/call"
}

func (*readBody) Close() error { return nil }

// startsSession reports whether a POST without a session id may start a session: only an
// initialize does (the SDK closes any other such request's session when it is answered: a
// 2026-07-28 client's server/discover, a ping). The body is decoded by the SDK's own decoder,
// so the two cannot disagree on what the method is; a body checkHTTPMessage did not read is
// counted as one that may.
func startsSession(r *http.Request) bool {
	b, ok := r.Body.(*readBody)
	if !ok || mutated("http-session-reserve-all") {
		return true
	}
	msg, err := jsonrpc.DecodeMessage(b.raw)
	if err != nil {
		return false // the handler refuses it without a session
	}
	req, ok := msg.(*jsonrpc.Request)
	return ok && req.Method == "initialize"
}
