package sandbox

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// RuleAmbiguousKeys names the refusal of a message with two keys equal under Unicode case
// folding in one object (exact duplicates included) or a key that is not valid Unicode: the
// relay judges with Go's encoding/json (keys matched case-insensitively, the last one kept),
// the wrapped server and the client parse such a message otherwise.
const RuleAmbiguousKeys = audit.RuleAmbiguousKeys

// member is one key of a JSON object and its value, in the order they are written.
type member struct {
	key string
	val json.RawMessage
}

// members reads every key of the JSON object raw, duplicates included (nil when it is not one).
func members(raw []byte) []member {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var out []member
	for dec.More() {
		k, err := dec.Token()
		ks, ok := k.(string)
		if err != nil || !ok {
			return out
		}
		var v json.RawMessage
		if dec.Decode(&v) != nil {
			return out
		}
		out = append(out, member{ks, v})
	}
	return out
}

// ambiguousFrame is what the relay reads of a client message it refuses as ambiguous: every
// reading of it, since the relay cannot know which one the server would take.
type ambiguousFrame struct {
	id     json.RawMessage // the id to answer; nil when the id itself is ambiguous or absent
	hasID  bool            // some key reads as "id" (a request, not a notification)
	method bool            // some key reads as "method" (not a response to the server's request)
	isCall bool            // some reading of its method is tools/call
	tools  []string        // every reading of params.name
}

func readAmbiguous(line []byte) ambiguousFrame {
	var a ambiguousFrame
	ids := 0
	for _, m := range members(line) {
		switch {
		case strings.EqualFold(m.key, "id"):
			ids++
			a.hasID, a.id = true, m.val
		case strings.EqualFold(m.key, "method"):
			a.method = true
			var s string
			_ = json.Unmarshal(m.val, &s)
			a.isCall = a.isCall || s == "tools/call"
		case strings.EqualFold(m.key, "params"):
			for _, p := range members(m.val) {
				var s string
				if strings.EqualFold(p.key, "name") && json.Unmarshal(p.val, &s) == nil {
					a.tools = append(a.tools, s)
				}
			}
		}
	}
	if ids != 1 || idKey(a.id) == "" {
		a.id = nil // answered with a null id: the relay cannot say which request it answers
	}
	return a
}

// refuseAmbiguous answers (and, for a tools/call, audits) a client message with ambiguous
// keys; it never reaches the server. A notification, or a response to the server's request, is
// dropped and logged (the server's request then goes unanswered, as for a client that never
// answers it).
func (r *relay) refuseAmbiguous(line []byte, err error) {
	a := readAmbiguous(line)
	why := fmt.Sprintf("the message is ambiguous (%s): %v", RuleAmbiguousKeys, err)
	switch {
	case a.isCall:
		sum := sha256.Sum256(line)
		p := &pending{id: a.id, method: "tools/call", tool: strings.Join(a.tools, "|"), argBytes: len(line),
			argHash: hex.EncodeToString(sum[:]), start: time.Now()}
		r.refuseCall(p, RuleAmbiguousKeys, why+"; it was not relayed (the audit's bytes and sha256 are the whole message's)")
	case a.hasID && a.method:
		r.refuse(a.id, "", RuleAmbiguousKeys, why+"; it was not relayed", codeInvalid)
	default:
		r.log.Warn("dropped an ambiguous notification or response from the client", "rule", RuleAmbiguousKeys, "err", err)
		r.explainf("dropped a client notification or response (%s): %s", RuleAmbiguousKeys, why)
	}
}

// ambiguousAnswer drops a server message with ambiguous keys (the relay would judge one
// reading, the client act on another), answering the tracked request it answers, if its id
// can be told.
func (r *relay) ambiguousAnswer(line []byte, err error) {
	why := fmt.Sprintf("the server's message is ambiguous (%s): %v; it was dropped", RuleAmbiguousKeys, err)
	r.log.Warn("dropped an ambiguous message from the wrapped server", "rule", RuleAmbiguousKeys, "err", err)
	r.explainf("%s", why)
	var ke *audit.KeyError
	if errors.As(err, &ke) && ke.Depth == 1 && strings.EqualFold(ke.Key, "id") {
		return // which request it answers is the ambiguity: the call's timeout answers it
	}
	var ce *caseKeyError
	if errors.As(err, &ce) && ce.member == "id" {
		return // the same: "ID" answers no request for some parsers, one for the relay
	}
	a := readAmbiguous(line)
	p := r.take(idKey(a.id))
	if p == nil {
		return
	}
	r.record(p, audit.Entry{Decision: "error", Rule: RuleAmbiguousKeys, Reason: why}, len(line), true) // before the client's write, which may block
	_ = r.toClient.frame(errorFrame(p.id, codeAmbiguous, "mcpsandbox wrap: "+why, map[string]any{"rule": RuleAmbiguousKeys}))
}

// protocolKeys are JSON-RPC's member names: the relay's Go decoder matches them without regard
// to case, a client or server reading keys as written does not.
var protocolKeys = []string{"jsonrpc", "id", "method", "params", "result", "error"}

// caseKeyError is a frame whose top-level key is a JSON-RPC member name only without regard to
// case ("Method", "Error", "ID"): the relay would read it as that member, a parser reading keys
// as written would not (atk38 F1: a server's answer with "Method":"ping" passed as a ping,
// past hide_denied and the audit, to clients that took it as the answer).
type caseKeyError struct{ key, member string }

func (e *caseKeyError) Error() string {
	return fmt.Sprintf("its key %q is the JSON-RPC member %q only without regard to case (parsers that read keys as written see no %s); send %q",
		clipKeyText(e.key), e.member, e.member, e.member)
}

func clipKeyText(k string) string {
	if len(k) > 64 {
		return k[:64] + "…"
	}
	return k
}

// protocolKeyCase reports a top-level key of the JSON object raw that folds to a JSON-RPC
// member name but is not it. It reads keys only (values are skipped, nothing is copied).
func protocolKeyCase(raw []byte) error {
	if mutated("wrap-protocol-key-case") {
		return nil
	}
	if k, m := executor.InexactKey(raw, protocolKeys); k != "" {
		return &caseKeyError{k, m}
	}
	return nil
}
