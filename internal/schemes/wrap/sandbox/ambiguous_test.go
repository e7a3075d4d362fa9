package sandbox

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// auditedRelay is testRelay with an audit log; entries reads it back.
func auditedRelay(t *testing.T, tools wrapsec.WrapTools) (r *relay, toClient, toServer *syncBuf, entries func() []audit.Entry) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { al.Close() })
	r, toClient, toServer = testRelay(tools)
	r.audit = al
	return r, toClient, toServer, func() []audit.Entry {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var es []audit.Entry
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var e audit.Entry
			if json.Unmarshal([]byte(l), &e) == nil && e.Hash != "" {
				es = append(es, e)
			}
		}
		return es
	}
}

// A client message with two keys equal under case folding anywhere in it (the relay's
// encoding/json keeps the last of name/NAME, the server the exact "name") is refused with
// json.ambiguous_keys and never reaches the server: secret_tool, denied, is not run as ok_tool;
// each refused tools/call is audited with every reading of its tool name.
func TestRelayRefusesAmbiguousKeys(t *testing.T) {
	r, toClient, toServer, entries := auditedRelay(t, wrapsec.WrapTools{Deny: []string{"secret_*"}, MaxArgumentBytes: 64 << 10})
	big := `{"x":"` + strings.Repeat("A", 300_000) + `"}`
	attacks := []string{
		`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"secret_tool","arguments":{},"NAME":"ok_tool"}}`,
		`{"jsonrpc":"2.0","id":12,"method":"tools/call","Method":"ping","params":{"name":"secret_tool","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"secret_tool","arguments":{}},"PARAMS":{"name":"ok_tool"}}`,
		`{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"ok_tool","arguments":` + big + `,"ARGUMENTS":{}}}`,
		`{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"secret_tool","arguments":{},"na\u006de":"ok_tool"}}`,
		`{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"ok_tool","arguments":{"path":"a","PATH":"b"}}}`,
		`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"name":"secret_tool","arguments":{}},"Id":null}`,
		`{"jsonrpc":"2.0","id":18,"method":"ping","Method":"tools/list"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","METHOD":"x"}`,
		`{"jsonrpc":"2.0","id":"s1","result":{"a":1,"A":2}}`,
	}
	ok := `{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"ok_tool","arguments":{"Path":"a","path2":"b"}}}`
	if err := r.fromClient(strings.NewReader(strings.Join(attacks, "\n") + "\n" + ok + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := toServer.lines(); len(got) != 1 || got[0] != ok {
		t.Fatalf("reached the server: %.300q, want only the unambiguous call", got)
	}
	c := toClient.lines()
	if len(c) != len(attacks)-2 {
		t.Fatalf("answers: %d, want %d (the notification and the response are not answered): %.500q", len(c), len(attacks)-2, c)
	}
	for i, a := range c {
		if !strings.Contains(a, RuleAmbiguousKeys) || !strings.Contains(a, `"error"`) {
			t.Errorf("answer %d does not name %s: %.300s", i, RuleAmbiguousKeys, a)
		}
	}
	for i, want := range []string{`"id":11`, `"id":12`, `"id":13`, `"id":14`, `"id":15`, `"id":16`, `"id":null`, `"id":18`} {
		if !strings.Contains(c[i], want) {
			t.Errorf("answer %d: want %s: %.200s", i, want, c[i])
		}
	}
	var refused []string
	for _, e := range entries() {
		if e.Decision != "refused" || e.Rule != RuleAmbiguousKeys {
			if e.Tool == "ok_tool" && e.Decision == audit.DecisionStarted {
				continue // the unambiguous call
			}
			t.Fatalf("audited %+v", e)
		}
		refused = append(refused, e.Tool)
	}
	want := []string{"secret_tool|ok_tool", "secret_tool", "secret_tool|ok_tool", "ok_tool", "secret_tool|ok_tool", "ok_tool", "secret_tool"}
	if strings.Join(refused, ",") != strings.Join(want, ",") {
		t.Fatalf("refusals audited for tools %q, want %q", refused, want)
	}
}

// A server message with ambiguous keys is dropped: a tools/list answer reading
// "secret_tool" to the client and "ok" to the relay's hide_denied filter does not pass, and the
// call it answers is answered with the rule instead.
func TestRelayDropsAmbiguousServerFrames(t *testing.T) {
	r, toClient, _ := testRelay(wrapsec.WrapTools{Deny: []string{"secret_*"}, HideDenied: true, MaxArgumentBytes: 1024})
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/list", start: time.Now()})
	list := `{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"secret_tool","NAME":"ok"}]}}`
	if err := r.fromServer(strings.NewReader(list + "\n")); err != nil {
		t.Fatal(err)
	}
	c := toClient.lines()
	if len(c) != 1 || strings.Contains(c[0], "secret_tool") || !strings.Contains(c[0], RuleAmbiguousKeys) || !strings.Contains(c[0], `"id":1`) {
		t.Fatalf("relayed to the client: %q", c)
	}
}

// blockedWriter is a peer that stopped reading: every write waits until release closes.
type blockedWriter struct{ release chan struct{} }

func (b blockedWriter) Write(p []byte) (int, error) { <-b.release; return len(p), nil }

// A timed-out call's outcome is audited though the wrapped server has stopped reading its
// stdin (the notifications/cancelled write blocks) and the client its stdout: the audit entry
// does not wait for either peer.
func TestRelayAuditsATimeoutPastABlockedPeer(t *testing.T) {
	r, _, _, entries := auditedRelay(t, wrapsec.Of(policy.Default(wrapsec.Name)).Tools)
	r.timeout = 20 * time.Millisecond
	release := make(chan struct{})
	defer close(release)
	r.toServer.w, r.toClient.w = blockedWriter{release}, blockedWriter{release}
	p := &pending{id: json.RawMessage(`7`), method: "tools/call", tool: "echo", start: time.Now()}
	if !r.track("7", p) {
		t.Fatal("the call was not tracked")
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		for _, e := range entries() {
			if e.TimedOut && e.Rule == RuleTimeout {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no timed-out entry in the audit log while the peers do not read: %+v", entries())
}

// A tools/call the server has not answered when the relay ends gets its outcome in the audit
// (trial39 F10: only its started line, which audit verify counts as a call whose serve died).
// Red with mutant wrap-unfinished-calls.
func TestRelayFinishesCallsLeftRunning(t *testing.T) {
	r, _, toServer, entries := auditedRelay(t, wrapsec.WrapTools{MaxArgumentBytes: 64 << 10})
	call := `{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`
	if err := r.fromClient(strings.NewReader(call + "\n")); err != nil {
		t.Fatal(err)
	}
	if got := toServer.lines(); len(got) != 1 || got[0] != call {
		t.Fatalf("relayed %q, want the call", got)
	}
	r.finish("cancelled", "the client closed its end")
	var decisions []string
	for _, e := range entries() {
		decisions = append(decisions, e.Decision)
	}
	if len(decisions) != 2 || decisions[0] != audit.DecisionStarted || decisions[1] != "cancelled" {
		t.Fatalf("audited %q, want the call started and cancelled", decisions)
	}
	r.finish("cancelled", "again") // nothing left: nothing more written
	if n := len(entries()); n != 2 {
		t.Fatalf("%d lines after a second finish, want 2", n)
	}
}
