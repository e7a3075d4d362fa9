package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/internal/visible"
)

// fromServer relays the server's frames to the client until the server's EOF.
func (r *relay) fromServer(out io.Reader) error {
	// a server that ends (or whose output fails) has said its last word: the slow-start note
	// ("still downloading") would mislead beside the exit wrap reports
	defer r.heardOnce.Do(func() { close(r.heard) })
	fr := newFrameReader(out, MaxFrame)
	for {
		line, oversize, err := fr.next()
		if err == nil {
			r.heardOnce.Do(func() { close(r.heard) })
		}
		if err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
		if oversize {
			r.oversizedAnswer(peekID(line))
			continue
		}
		if len(trimSpace(line)) == 0 {
			continue
		}
		if err := r.serverFrame(line); err != nil {
			return err
		}
	}
}

// oversizedAnswer drops a server frame over MaxFrame, answering the request it answers.
func (r *relay) oversizedAnswer(id json.RawMessage) {
	why := fmt.Sprintf("the server's message is over %d bytes (%s); it was dropped", MaxFrame, RuleFrame)
	r.log.Warn("dropped an oversized message from the wrapped server", "limit", MaxFrame)
	r.explainf("%s", why)
	p := r.take(idKey(id))
	if p == nil {
		return
	}
	r.record(p, audit.Entry{Decision: "error", Rule: RuleFrame, Reason: why}, MaxFrame+1, true) // before the client's write, which may block
	_ = r.toClient.frame(errorFrame(p.id, codeTooLarge, "mcpsandbox wrap: "+why, map[string]any{"rule": RuleFrame}))
}

// serverFrame forwards one server frame unchanged, except a tools/list answer that lists
// denied tools (rewritten without them), answers the relay already gave (dropped), and text
// with terminal controls (shown: visible.go).
func (r *relay) serverFrame(line []byte) error {
	if err := r.serverKeys.Check(line); err != nil && !mutated("wrap-ambiguous-keys-server") {
		r.ambiguousAnswer(line, err)
		return nil
	}
	if err := protocolKeyCase(line); err != nil {
		r.ambiguousAnswer(line, err)
		return nil
	}
	var m message
	if err := json.Unmarshal(line, &m); err != nil {
		if mutated("wrap-malformed") {
			return r.toClient.frame(visibleFrame(line))
		}
		r.log.Warn("dropped a message from the wrapped server that is not JSON", "err", err, "bytes", len(line))
		r.explainf("dropped a server message that is not JSON (%s)", RuleMalform)
		return nil
	}
	if bytes.IndexByte(trimSpace(line), '\r') >= 0 && !mutated("wrap-frame-cr-server") {
		r.carriageReturnAnswer(m)
		return nil
	}
	if m.Method != "" && idKey(m.ID) != "" && !r.mayAsk(m.Method) && !mutated("wrap-server-requests") {
		r.refuseServerRequest(m)
		return nil
	}
	if m.Method != "" || idKey(m.ID) == "" {
		return r.toClientBounded(visibleFrame(line)) // the server's requests and notifications
	}
	p := r.take(idKey(m.ID))
	if p == nil {
		if r.known(m.ID) {
			return nil
		}
		if k := r.aliased(m.ID); k != "" && !mutated("wrap-answer-id-alias") {
			// The TypeScript SDK matches an answer by Number(id): "1", 1.0 or "0x1" is taken for
			// the answer to request 1, a tools/list answer past hide_denied, a call's result
			// past the audit (its outcome left to the timeout). Only the exact id answers it.
			r.log.Warn("dropped an answer of the wrapped server whose id reads as the number of a request waiting for its answer, but is not that id", "id", clipID(m.ID), "request", k)
			r.explainf("dropped a server answer with id %s, which a client reads as request %s's (%s)", clipID(m.ID), k, RuleMalform)
			return nil
		}
		return r.toClientBounded(visibleFrame(line)) // an answer to a request the relay does not track
	}
	out := line
	if p.method == "tools/list" {
		if b, changed := r.filterList(line, m.Result); changed {
			out = b
		}
	}
	out = visibleFrame(out)
	if len(out) > MaxFrame && !mutated("wrap-frame-bound-written") {
		// what the relay writes is held to the bound it reads with: shown controls (3 bytes a
		// DEL) and a rewritten list's escapes (6 bytes a "<") grew a 4 MiB answer to 12-25 MB
		// (atk38 F2)
		r.oversizedAnswerOf(p, len(out))
		return nil
	}
	switch p.method {
	case "tools/call":
		var res struct {
			IsError bool `json:"isError"`
		}
		_ = json.Unmarshal(m.Result, &res)
		dec := "ran"
		if len(m.Error) > 0 {
			dec = "error"
		}
		r.record(p, audit.Entry{Decision: dec}, len(line), res.IsError || len(m.Error) > 0)
		if r.explain != nil && (res.IsError || len(m.Error) > 0) {
			r.explainAccess(p.tool, line)
		}
	}
	return r.toClient.frame(out)
}

// toClientBounded writes a frame that answers no tracked request, or drops it (logged) when it
// is over MaxFrame as written.
func (r *relay) toClientBounded(b []byte) error {
	if len(b) > MaxFrame && !mutated("wrap-frame-bound-written") {
		why := fmt.Sprintf("the server's message is over %d bytes as relayed (%s); it was dropped", MaxFrame, RuleFrame)
		r.log.Warn("dropped a message from the wrapped server that is oversized as relayed", "limit", MaxFrame, "bytes", len(b))
		r.explainf("%s", why)
		return nil
	}
	return r.toClient.frame(b)
}

// oversizedAnswerOf answers the tracked request p whose answer is over MaxFrame as relayed.
func (r *relay) oversizedAnswerOf(p *pending, n int) {
	why := fmt.Sprintf("the server's answer is over %d bytes as relayed (%d: terminal controls shown, a rewritten list) (%s); it was dropped", MaxFrame, n, RuleFrame)
	r.log.Warn("dropped an answer of the wrapped server that is oversized as relayed", "limit", MaxFrame, "bytes", n)
	r.explainf("%s", why)
	r.record(p, audit.Entry{Decision: "error", Rule: RuleFrame, Reason: why}, n, true) // before the client's write, which may block
	_ = r.toClient.frame(errorFrame(p.id, codeTooLarge, "mcpsandbox wrap: "+why, map[string]any{"rule": RuleFrame}))
}

// refuseServerRequest answers the server's request the policy does not let reach the client
// (sampling: the user's model run on the server's prompt; elicitation: the user asked for input
// in the server's words), naming the rule: the client never sees it.
func (r *relay) refuseServerRequest(m message) {
	method := m.Method
	if len(method) > 64 {
		method = method[:64] + "…"
	}
	why := fmt.Sprintf("the wrapped server's request %q is not passed to the client (%s lists the requests beyond ping and roots/list it may send)", method, RuleServerRequests)
	r.log.Warn("refused a request of the wrapped server", "method", method, "rule", RuleServerRequests)
	r.explainf("%s", why)
	_ = r.toServer.frame(errorFrame(m.ID, codeRefused, "mcpsandbox wrap: "+why, map[string]any{"rule": RuleServerRequests}))
}

// carriageReturnAnswer drops a server message with a carriage return inside it, answering the
// request it answers: a client reading lines as Java's or .NET's readLine does would end a line
// there and take what follows for a message of its own, one the relay never judged (a tools/list
// answer past hide_denied, an answer audited as another's).
func (r *relay) carriageReturnAnswer(m message) {
	why := fmt.Sprintf("the server's message has a carriage return inside it (%s: a client may end a line there); it was dropped", RuleMalform)
	r.log.Warn("dropped a message from the wrapped server with a carriage return inside it", "rule", RuleMalform)
	r.explainf("%s", why)
	if m.Method != "" {
		return // the server's request or notification: unanswered, as one never sent
	}
	p := r.take(idKey(m.ID))
	if p == nil {
		return
	}
	r.record(p, audit.Entry{Decision: "error", Rule: RuleMalform, Reason: why}, 0, true) // before the client's write, which may block
	_ = r.toClient.frame(errorFrame(p.id, codeInvalid, "mcpsandbox wrap: "+why, map[string]any{"rule": RuleMalform}))
}

// known reports (and forgets) an answer to a tools/call the relay already answered itself
// (timed out): the server's late answer is dropped.
func (r *relay) known(id json.RawMessage) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	k := idKey(id)
	if _, ok := r.expired[k]; ok {
		delete(r.expired, k)
		return true
	}
	return false
}

// filterList removes the tools the policy refuses from a tools/list answer (hide_denied).
func (r *relay) filterList(line []byte, result json.RawMessage) ([]byte, bool) {
	if !r.tools.HideDenied || mutated("wrap-hide-denied") {
		return nil, false
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(result, &res) != nil {
		return nil, false
	}
	var tools []json.RawMessage
	if json.Unmarshal(res["tools"], &tools) != nil {
		return nil, false
	}
	kept := tools[:0:0]
	for _, t := range tools {
		var head struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(t, &head)
		if r.verdict(head.Name) == "" {
			kept = append(kept, t)
		}
	}
	if len(kept) == len(tools) {
		return nil, false
	}
	res["tools"], _ = json.Marshal(kept)
	var whole map[string]json.RawMessage
	if json.Unmarshal(line, &whole) != nil {
		return nil, false
	}
	whole["result"], _ = json.Marshal(res)
	b, err := json.Marshal(whole)
	return b, err == nil
}

// explainAccess logs what a failed call's answer says the kernel refused ("permission denied",
// EACCES, EPERM: how a Landlock or seccomp refusal looks from inside the server), so an operator
// sees which path to add to the policy. Only with --explain-denials; at most 3 quotes a call.
func (r *relay) explainAccess(tool string, line []byte) {
	var text strings.Builder
	s := string(line)
	n := 0
	var quoted [][2]int // the excerpts' spans
	for _, mark := range deniedMarks {
		for from := 0; n < 3; {
			i := strings.Index(s[from:], mark)
			if i < 0 {
				break
			}
			i += from
			from = i + len(mark)
			lo, hi := max(0, i-120), min(len(s), i+len(mark)+120)
			if slices.ContainsFunc(quoted, func(q [2]int) bool { return q[0] <= i && i < q[1] }) && !mutated("wrap-explain-quotes-twice") {
				continue // in an excerpt already quoted ("EACCES: permission denied" holds two marks)
			}
			excerpt := s[lo:hi]
			if !mutated("wrap-explain-controls") {
				// the server's bytes on the user's terminal: a raw C1 CSI or DEL is valid JSON
				excerpt = visible.Line(excerpt) // one line: its own newlines and U+2028 shown
			}
			text.WriteString("\n    … " + excerpt + " …")
			n++
			quoted = append(quoted, [2]int{lo, hi})
		}
	}
	if n == 0 {
		return
	}
	for _, d := range slices.Sorted(maps.Keys(r.writeNotes)) {
		if strings.Contains(s, d+"/") || strings.Contains(s, d+`"`) || strings.Contains(s, d+"'") {
			// the path is in wrap.write: the sandbox did not refuse it, the directory's owner did
			r.explainf("tools/call %q failed writing in a wrap.write directory: %s:%s", tool, r.writeNotes[d], text.String())
			return
		}
	}
	if d, line := r.writeDirInStderr(); d != "" {
		// the answer names no path, but the server's stderr, relayed just before, names one in
		// a wrap.write directory its uid cannot write (trial49 F4)
		r.explainf("tools/call %q failed writing in a wrap.write directory (the server's stderr says %q): %s:%s", tool, visible.Line(line), r.writeNotes[d], text.String())
		return
	}
	if !mutated("wrap-explain-read-only") {
		for _, d := range slices.Sorted(slices.Values(r.readOnly)) {
			if strings.Contains(s, d+"/") || strings.Contains(s, d+`"`) || strings.Contains(s, d+"'") {
				// in wrap.read: reading it is allowed, so what failed is a write (or the file's own mode)
				r.explainf("tools/call %q failed on a path under %s, which the policy lets the server read (wrap.read) but not write: if it should write there, add %s to wrap.write (data only: MS501, MS502), or the file's own permissions refused it:%s",
					tool, visible.Name(d), visible.Name(d), text.String())
				return
			}
		}
	}
	r.explainf("tools/call %q failed with what looks like a sandbox refusal (a path outside wrap.read/wrap.write, or the network):%s", tool, text.String())
}

// deniedMarks are the words of a kernel refusal as a server reports it.
var deniedMarks = []string{"ermission denied", "EACCES", "EPERM", "Operation not permitted"}

// stderrWait is how long --explain-denials waits for the server's stderr line about a failed
// call: the server writes it before its answer, but wrap reads the two pipes apart.
const stderrWait = 200 * time.Millisecond

// writeDirInStderr is the wrap.write directory its uid cannot write (writeNotes) that a
// refusal line of the server's stderr names, and the line; "" when none does.
func (r *relay) writeDirInStderr() (dir, line string) {
	if len(r.writeNotes) == 0 || r.stderrDenied == nil || mutated("wrap-explain-stderr-unread") {
		return "", ""
	}
	for deadline := time.Now().Add(stderrWait); ; time.Sleep(10 * time.Millisecond) {
		for _, l := range r.stderrDenied() {
			for _, d := range slices.Sorted(maps.Keys(r.writeNotes)) {
				if strings.Contains(l, d+"/") || strings.Contains(l, d+`"`) || strings.Contains(l, d+"'") {
					return d, l
				}
			}
		}
		if time.Now().After(deadline) {
			return "", ""
		}
	}
}

// aliased is the key of a tracked request whose id the answer id reads as, read as a client may
// (the TypeScript SDK's Number(id): a string's number, hex and white space included; 1.0 and
// 1e0 for 1), though it is not that id; "" when none.
func (r *relay) aliased(id json.RawMessage) string {
	v, ok := looseNumber(id)
	if !ok {
		return ""
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.inflight {
		if w, ok := looseNumber(json.RawMessage(k)); ok && w == v {
			return k
		}
	}
	return ""
}

// looseNumber reads id as a number the way JavaScript's Number() does for what a JSON id can
// be: a number, or a string holding one (surrounding white space, 0x/0o/0b integers).
func looseNumber(id json.RawMessage) (float64, bool) {
	var v any
	if len(id) == 0 || json.Unmarshal(id, &v) != nil {
		return 0, false
	}
	switch v := v.(type) {
	case float64:
		return v, true
	case string:
		// Number() trims ECMAScript's white space and line terminators: U+FEFF among them,
		// which strings.TrimSpace keeps (atk38 F4); trimming more than it (U+0085) only
		// drops more answers
		s := strings.TrimFunc(v, jsSpace)
		if s == "" {
			return 0, true // Number("") is 0
		}
		if len(s) > 2 && s[0] == '0' && strings.ContainsRune("xXoObB", rune(s[1])) {
			n, err := strconv.ParseUint(s, 0, 64)
			return float64(n), err == nil
		}
		if strings.ContainsAny(s, "_xXpP") { // Go reads 1_000 and hex floats; Number() does not
			return 0, false
		}
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	return 0, false
}

// jsSpace: what Go or ECMAScript counts as white space around a number (StrWhiteSpaceChar:
// Zs, TAB, VT, FF, U+FEFF, the line terminators).
func jsSpace(r rune) bool {
	return unicode.IsSpace(r) || (r == '\uFEFF' && !mutated("wrap-answer-id-bom"))
}

// clipID is an id for a log line: at most 64 bytes of it.
func clipID(id json.RawMessage) string {
	if len(id) > 64 {
		return string(id[:64]) + "…"
	}
	return string(id)
}
