package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// JSON-RPC error codes the relay answers with (clear of -32001..-32005, which clients such as
// the Go SDK read as their own: -32003 "client is closing" ends a Go client's session).
const (
	codeParse     = -32700
	codeInvalid   = -32600
	codeRefused   = -32010 // the tool policy (or a bound) refused the call; message and data name the rule
	codeTimedOut  = -32011 // limits.timeout passed
	codeTooLarge  = -32012 // the server's answer was over MaxFrame
	codeAmbiguous = -32013 // the server's answer held ambiguous keys (RuleAmbiguousKeys)
)

// Rules a refusal or a dropped frame names besides the tool policy's.
const (
	RuleFrame          = "wrap.max_frame"
	RuleInflight       = "wrap.max_inflight"
	RuleTimeout        = "limits.timeout"
	RuleArgBytes       = "wrap.tools.max_argument_bytes"
	RuleMalform        = "wrap.malformed_frame"
	RuleServerRequests = "wrap.server_requests"
)

// relay is the JSON-RPC relay between a client (stdin/stdout of wrap) and the wrapped server.
type relay struct {
	tools   wrapsec.WrapTools
	mayAsk  func(method string) bool // the server's requests that reach the client
	timeout time.Duration
	audit   *audit.Log
	server  string // the policy's name, for the audit
	hash    string // the policy's hash
	session string
	log     *slog.Logger
	explain io.Writer // --explain-denials: one line per refusal (nil: off)
	// explained counts --explain-denials lines: at most bounds.MaxLogLines in a
	// bounds.LogWindow, as wrap's other lines (atk38 F3: a server's junk lines each made one)
	explained struct {
		sync.Mutex
		start      time.Time
		n, dropped int
	}
	// writeNotes: for --explain-denials, each wrap.write directory the server's uid cannot
	// write, with why and the fix (WriteDirNote)
	writeNotes map[string]string
	// stderrDenied: the server's stderr lines of refusals since the last ask (stderrSeen.take:
	// Run sets it; nil without one), which may name the path a failed call's answer does not
	stderrDenied func() []string
	// readOnly: for --explain-denials, the wrap.read paths no wrap.write directory holds: a
	// write there is refused by the policy's choice, named as such (trial39 F5)
	readOnly []string

	toClient, toServer lockedWriter

	// clientKeys and serverKeys find ambiguous keys in each direction's frames (one goroutine each).
	clientKeys, serverKeys audit.KeyChecker

	// heard closes at the server's first frame; slowStart notes a server that says nothing for
	// startPatience after the client's initialize (slowstart.go).
	heard               chan struct{}
	heardOnce, initOnce sync.Once
	patience            time.Duration

	mu       sync.Mutex
	inflight map[string]*pending
	expired  map[string]struct{} // answered by the relay (timed out): the server's late answer is dropped
}

// pending is one tracked client request.
type pending struct {
	id       json.RawMessage
	method   string
	tool     string
	argBytes int
	argHash  string
	start    time.Time
	timer    *time.Timer
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// frame writes b and a newline as one write.
func (l *lockedWriter) frame(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	buf := make([]byte, 0, len(b)+1)
	buf = append(append(buf, b...), '\n')
	_, err := l.w.Write(buf)
	return err
}

// fromClient relays the client's frames to the server until the client's EOF.
func (r *relay) fromClient(in io.Reader) error {
	fr := newFrameReader(in, MaxFrame)
	for {
		line, oversize, err := fr.next()
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if oversize {
			id := peekID(line)
			r.refuse(id, "", RuleFrame, fmt.Sprintf("the message is over %d bytes; it was not relayed", MaxFrame), codeInvalid)
			continue
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		if err := r.clientFrame(line); err != nil {
			return err
		}
	}
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// clientFrame judges one client frame and forwards it unchanged when allowed.
func (r *relay) clientFrame(line []byte) error {
	var m message
	if t := trimSpace(line); len(t) > 0 && t[0] == '[' {
		r.refuse(nil, "", RuleMalform, "JSON-RPC batches are not relayed (MCP stdio sends one message per line)", codeInvalid)
		return nil
	}
	if err := r.clientKeys.Check(line); err != nil && !mutated("wrap-ambiguous-keys") {
		// judged here with one reading of the keys, run by the server with another: refused
		r.refuseAmbiguous(line, err)
		return nil
	}
	if err := protocolKeyCase(line); err != nil {
		r.refuseAmbiguous(line, err)
		return nil
	}
	if err := json.Unmarshal(line, &m); err != nil {
		r.refuse(nil, "", RuleMalform, "the message is not JSON: "+err.Error(), codeParse)
		return nil
	}
	if bytes.IndexByte(trimSpace(line), '\r') >= 0 && !mutated("wrap-frame-cr") {
		// a carriage return inside a message can only be whitespace between its tokens (JSON
		// has none raw in a string), and servers reading lines as Python's TextIOWrapper (the
		// MCP Python SDK), Java's BufferedReader or .NET's StreamReader do end a line there: a
		// tools/call nested in a notification's params would reach such a server as a message
		// of its own, unjudged
		r.refuse(m.ID, "", RuleMalform, "a carriage return inside a message (MCP stdio messages are one line each, "+
			"and a server may end a line at it): send the message on one line, ended by \\n or \\r\\n", codeInvalid)
		return nil
	}
	key := idKey(m.ID)
	if key == "" && m.Method == "tools/call" && !mutated("wrap-tool-policy") {
		// a tools/call without an id (or with a null one) would reach the server unjudged
		r.refuse(m.ID, "", RuleMalform, "a tools/call needs an id (string or number)", codeInvalid)
		return nil
	}
	if key != "" && m.Method != "" && r.waiting(key) && !mutated("wrap-id-inflight") {
		// two requests with one id (a ping or resources/read included): the server's answer to
		// either would be taken for the tools/call's (its outcome audited from another answer,
		// the other answer unjudged); refused as malformed frames are, unaudited
		r.refuse(m.ID, "", RuleMalform, "a request with this id is already waiting for the server's answer "+
			"(JSON-RPC ids must be unique among requests in flight): use a new id", codeInvalid)
		return nil
	}
	if m.Method == "initialize" {
		r.initOnce.Do(func() { go r.slowStart(r.patience) })
		if !mutated("wrap-client-capabilities") {
			line = r.withoutCapabilities(line)
		}
	}
	if key == "" || (m.Method != "tools/call" && m.Method != "tools/list") {
		return r.toServer.frame(line) // notifications, responses, other requests: unchanged
	}
	if len(key) > MaxTrackedID && !mutated("wrap-id-bytes") {
		// the relay holds a tracked request's id until its answer (twice: the key and the id),
		// and once more after a timeout: 256 calls with 4 MiB ids held 2 GiB. Answered with a
		// null id, as serve answers an id over its bound, so the refusal does not echo it.
		r.refuse(nil, "", RuleMalform, fmt.Sprintf("a %s needs an id of at most %d bytes (this one is %d): use a shorter id", m.Method, MaxTrackedID, len(key)), codeInvalid)
		return nil
	}
	if !plainID(key) && !mutated("wrap-id-canonical") {
		// the server's answer would carry another id (1.0 comes back as 1): past the audit's
		// outcome and the tools/list filter
		r.refuse(m.ID, "", RuleMalform, fmt.Sprintf("a %s needs an id that is a string or an integer written plainly within ±%d "+
			"(the server reads 1.0, 1e0 or -0 as another number, and its answer would not be matched to the request)", m.Method, maxPlainID), codeInvalid)
		return nil
	}
	p := &pending{id: m.ID, method: m.Method, start: time.Now()}
	if m.Method == "tools/call" {
		var params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		_ = json.Unmarshal(m.Params, &params)
		p.tool, p.argBytes = params.Name, len(params.Arguments)
		sum := sha256.Sum256(params.Arguments)
		p.argHash = hex.EncodeToString(sum[:])
		if rule := r.verdict(params.Name); rule != "" {
			r.refuseCall(p, rule, fmt.Sprintf("tool %q is not allowed by the policy (%s)", params.Name, rule))
			return nil
		}
		if max := int(r.tools.MaxArgumentBytes); p.argBytes > max && !mutated("wrap-arg-cap") {
			r.refuseCall(p, RuleArgBytes, fmt.Sprintf("the arguments of %q are %d bytes, over %s = %d", params.Name, p.argBytes, RuleArgBytes, max))
			return nil
		}
	}
	if !r.track(key, p) {
		r.refuseCall(p, RuleInflight, fmt.Sprintf("%d requests are already waiting for the server's answer", MaxInflight))
		return nil
	}
	// No call reaches the server unaudited: its intent is on record first, or it is refused.
	if err := r.intent(p); err != nil {
		r.take(key)
		r.refuseCall(p, "audit.path", fmt.Sprintf("the audit log cannot be written (%v), and no call reaches the server unaudited: make audit.path writable again", err))
		return nil
	}
	return r.toServer.frame(line)
}

// verdict is the rule refusing a tool name, "" when allowed.
func (r *relay) verdict(name string) string {
	if mutated("wrap-tool-policy") {
		return ""
	}
	return r.tools.WrapVerdict(name)
}

// waiting says whether a request with this id awaits the server's answer: tracked, or answered
// by the relay (timed out) with the server's late answer still to come.
func (r *relay) waiting(key string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, tracked := r.inflight[key]
	_, late := r.expired[key]
	return tracked || late
}

// track records a request awaiting its answer; false when MaxInflight are waiting already.
func (r *relay) track(key string, p *pending) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	waiting := len(r.inflight)
	if !mutated("wrap-expired-count") {
		// a timed-out request the server has not answered is still the server's to answer: past
		// MaxInflight of them the relay could not remember their ids, and a reused id would take
		// the old call's late answer for its own
		waiting += len(r.expired)
	}
	if _, dup := r.inflight[key]; !dup && waiting >= MaxInflight {
		return false
	}
	r.inflight[key] = p
	if p.method == "tools/call" && r.timeout > 0 && !mutated("wrap-timeout") {
		p.timer = time.AfterFunc(r.timeout, func() { r.expire(key, p) })
	}
	return true
}

// take removes and returns the request a response answers (nil when not tracked).
func (r *relay) take(key string) *pending {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.inflight[key]
	if p != nil {
		delete(r.inflight, key)
		if p.timer != nil {
			p.timer.Stop()
		}
	}
	return p
}

// expire answers a tools/call the server did not answer within limits.timeout and tells the
// server to cancel it; its late answer is dropped.
func (r *relay) expire(key string, p *pending) {
	r.mu.Lock()
	if r.inflight[key] != p {
		r.mu.Unlock()
		return
	}
	delete(r.inflight, key)
	if len(r.expired) < MaxInflight {
		r.expired[key] = struct{}{}
	}
	r.mu.Unlock()
	msg := fmt.Sprintf("tools/call %q timed out after %s (%s)", p.tool, r.timeout, RuleTimeout)
	outcome := audit.Entry{Decision: "error", Rule: RuleTimeout, Reason: msg, TimedOut: true}
	first := !mutated("wrap-audit-before-peers")
	if first {
		// audited before either peer is written to: a server that stops reading its stdin (or a
		// client its stdout) blocks the write for as long as it likes, and the call's outcome
		// would be missing from the log all that time (for ever, if wrap is killed meanwhile)
		r.record(p, outcome, 0, false)
	}
	_ = r.toClient.frame(errorFrame(p.id, codeTimedOut, msg, map[string]any{"rule": RuleTimeout}))
	cancel, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled",
		"params": map[string]any{"requestId": p.id, "reason": msg}})
	_ = r.toServer.frame(cancel)
	if !first {
		r.record(p, outcome, 0, false)
	}
	r.explainf("timed out: %s", msg)
}

// finish records the outcome of every tools/call still waiting for the server's answer when the
// relay ends (the client's EOF, the server's end, a signal): serve writes "cancelled" for a call
// its client left, and wrap left only the call's started line, which audit verify counts as a
// call whose serve died running it (trial39 F10). Called once the server's last answers were
// relayed.
func (r *relay) finish(decision, why string) {
	if mutated("wrap-unfinished-calls") {
		return
	}
	r.mu.Lock()
	left := make([]*pending, 0, len(r.inflight))
	for key, p := range r.inflight {
		delete(r.inflight, key)
		if p.timer != nil {
			p.timer.Stop()
		}
		left = append(left, p)
	}
	r.mu.Unlock()
	for _, p := range left {
		r.record(p, audit.Entry{Decision: decision, Reason: why}, 0, false)
	}
}

// refuse answers a frame the relay does not pass on (id may be nil).
func (r *relay) refuse(id json.RawMessage, tool, rule, why string, code int) {
	_ = r.toClient.frame(errorFrame(id, code, "mcpsandbox wrap: "+why, map[string]any{"rule": rule}))
	r.explainf("refused a client message (%s): %s", rule, why)
}

// refuseCall answers a refused tools/call with an error naming the rule, and audits it.
func (r *relay) refuseCall(p *pending, rule, why string) {
	r.record(p, audit.Entry{Decision: "refused", Rule: rule, Reason: why}, 0, false) // before the client's write, which may block
	r.log.Info("call refused", "tool", visible.Name(p.tool), "rule", rule, "reason", visible.Line(why))
	_ = r.toClient.frame(errorFrame(p.id, codeRefused, "mcpsandbox wrap refused the call: "+why, map[string]any{"rule": rule}))
	r.explainf("refused tools/call %q (%s): %s", p.tool, rule, why)
}

func (r *relay) explainf(format string, args ...any) {
	if r.explain == nil {
		return
	}
	e := &r.explained
	e.Lock()
	defer e.Unlock()
	if now := time.Now(); now.Sub(e.start) >= bounds.LogWindow {
		if e.dropped > 0 {
			fmt.Fprintf(r.explain, "mcpsandbox wrap: %d denial lines dropped: more than %d in %s\n", e.dropped, bounds.MaxLogLines, bounds.LogWindow)
		}
		e.start, e.n, e.dropped = now, 0, 0
	}
	if e.n >= bounds.MaxLogLines && !mutated("wrap-explain-unbounded") {
		e.dropped++
		return
	}
	e.n++
	fmt.Fprintf(r.explain, "mcpsandbox wrap: denied: "+format+"\n", args...)
}

// intent records a tools/call about to reach the server.
func (r *relay) intent(p *pending) error {
	if mutated("wrap-audit-intent") {
		return nil
	}
	return r.record(p, audit.Entry{Decision: audit.DecisionStarted}, 0, false)
}

// record writes one tools/call to the hash-chained audit log; the error is the log's.
func (r *relay) record(p *pending, e audit.Entry, resultBytes int, isError bool) error {
	if r.audit == nil || p.method != "tools/call" || mutated("wrap-audit") {
		return nil
	}
	args, _ := json.Marshal(map[string]any{"bytes": p.argBytes, "sha256": p.argHash,
		"result_bytes": resultBytes, "is_error": isError}) // plain data
	e.Time = time.Now().UTC().Format(time.RFC3339Nano)
	e.Server, e.Session, e.Call, e.Tool, e.Arguments = r.server, r.session, r.session+"/"+idKey(p.id), p.tool, args
	if e.Decision != audit.DecisionStarted {
		e.DurationMS = time.Since(p.start).Milliseconds()
	}
	e.PolicyHash = r.hash
	err := r.audit.Append(e)
	if err != nil {
		r.log.Warn("could not write a tools/call to the audit log", "tool", p.tool, "decision", e.Decision, "err", err)
	}
	return err
}

// requestCapability is the client capability that lets a server send each opt-in request.
var requestCapability = map[string]string{"sampling/createMessage": "sampling", "elicitation/create": "elicitation"}

// withoutCapabilities is the client's initialize request without the capabilities whose requests
// wrap.server_requests does not let through (sampling, elicitation): the server would otherwise
// be told it may ask, ask, and be refused, and a server may take the advertised capability for
// leave to send them (or to take another way around). Everything else is kept; a message the
// relay cannot read as an initialize with object params passes unchanged (the server refuses it).
func (r *relay) withoutCapabilities(line []byte) []byte {
	var whole map[string]json.RawMessage
	if json.Unmarshal(line, &whole) != nil {
		return line
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(whole["params"], &params) != nil || params == nil {
		return line
	}
	var caps map[string]json.RawMessage
	if json.Unmarshal(params["capabilities"], &caps) != nil || caps == nil {
		return line
	}
	dropped := false
	for method, capName := range requestCapability {
		if r.mayAsk(method) {
			continue
		}
		// keys are matched as the server's JSON reader matches them: exactly (the frame's keys
		// are unambiguous under case folding, checked before)
		if _, ok := caps[capName]; ok {
			delete(caps, capName)
			dropped = true
		}
		// the task-augmented form (MCP 2025-11-25): capabilities.tasks.requests.sampling
		if t, ok := dropNested(caps["tasks"], "requests", capName); ok {
			caps["tasks"] = t
			dropped = true
		}
	}
	if !dropped {
		return line
	}
	var err error
	if params["capabilities"], err = json.Marshal(caps); err != nil {
		return line
	}
	if whole["params"], err = json.Marshal(params); err != nil {
		return line
	}
	b, err := json.Marshal(whole)
	if err != nil {
		return line
	}
	return b
}

// dropNested is obj without obj[outer][key] (false when there is none to drop).
func dropNested(obj json.RawMessage, outer, key string) (json.RawMessage, bool) {
	var o map[string]json.RawMessage
	if json.Unmarshal(obj, &o) != nil || o == nil {
		return nil, false
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(o[outer], &in) != nil || in == nil {
		return nil, false
	}
	if _, ok := in[key]; !ok {
		return nil, false
	}
	delete(in, key)
	b, err := json.Marshal(in)
	if err != nil {
		return nil, false
	}
	o[outer] = b
	if b, err = json.Marshal(o); err != nil {
		return nil, false
	}
	return b, true
}
