package sandbox

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The wrapped server's text reaches the client with its terminal controls shown, not done:
// a tool's result text, its error, a tools/list description, a log notification. What the client
// sends back or a program reads (ids, progress tokens, cursors, schemas, structured content)
// passes as it was, and a frame with no control passes byte for byte.
func TestRelayShowsServerTextControls(t *testing.T) {
	r, toClient, _ := testRelay(wrapsec.Of(policy.Default(wrapsec.Name)).Tools)
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/call", tool: "t", start: time.Now()})
	r.track(`"two"`, &pending{id: json.RawMessage(`"two"`), method: "tools/list", start: time.Now()})
	r.track("3", &pending{id: json.RawMessage("3"), method: "tools/call", tool: "t", start: time.Now()})
	osc52 := `\u001b]52;c;ZWNobyBwd25lZA==\u0007`
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok ` + osc52 + ` \u009b2J over\rwritten\r\nline"}],"structuredContent":{"raw":"\u001b[8m"}}}`,
		`{"jsonrpc":"2.0","id":"two","result":{"tools":[{"name":"t","description":"lists \u001b[8mhidden\u001b[0m","inputSchema":{"type":"object","properties":{"p":{"type":"string","pattern":"^[^\u0000-\u001f]*$"}}}}],"nextCursor":"c\u001b"}}`,
		`{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"bad ` + osc52 + `"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"log \u001b]0;title\u0007"}}`,
		`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p\u001b","progress":1,"message":"step \u0007"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"plain é\u00e9 \\u001b"}}`,
	}
	if err := r.fromServer(strings.NewReader(strings.Join(frames, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	c := toClient.lines()
	if len(c) != len(frames) {
		t.Fatalf("relayed %d frames, want %d: %q", len(c), len(frames), c)
	}
	type msg struct {
		ID     any            `json:"id"`
		Params map[string]any `json:"params"`
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	var m [6]msg
	for i := range m {
		if err := json.Unmarshal([]byte(c[i]), &m[i]); err != nil {
			t.Fatalf("frame %d: %v: %s", i, err, c[i])
		}
	}
	text := m[0].Result["content"].([]any)[0].(map[string]any)["text"].(string)
	if want := "ok ␛]52;c;ZWNobyBwd25lZA==␇ ␛[2J over␍written\r\nline"; text != want {
		t.Errorf("result text %q, want %q", text, want)
	}
	if raw := m[0].Result["structuredContent"].(map[string]any)["raw"]; raw != "\x1b[8m" {
		t.Errorf("structured content changed: %q", raw)
	}
	tool := m[1].Result["tools"].([]any)[0].(map[string]any)
	if d := tool["description"]; d != "lists ␛[8mhidden␛[0m" {
		t.Errorf("description %q", d)
	}
	if pat := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)["p"].(map[string]any)["pattern"]; pat != "^[^\x00-\x1f]*$" {
		t.Errorf("schema pattern changed: %q", pat)
	}
	if cur := m[1].Result["nextCursor"]; cur != "c\x1b" || m[1].ID != "two" {
		t.Errorf("cursor %q id %v: what the client sends back must pass as it was", cur, m[1].ID)
	}
	if msg := m[2].Error["message"]; msg != "bad ␛]52;c;ZWNobyBwd25lZA==␇" {
		t.Errorf("error message %q", msg)
	}
	if d := m[3].Params["data"]; d != "log ␛]0;title␇" {
		t.Errorf("log data %q", d)
	}
	if tok, msg := m[4].Params["progressToken"], m[4].Params["message"]; tok != "p\x1b" || msg != "step ␇" {
		t.Errorf("progress token %q message %q", tok, msg)
	}
	if c[5] != frames[5] {
		t.Errorf("a frame without controls changed:\n%s\n%s", c[5], frames[5])
	}
}

// A top-level key in another case ("Result", "PARAMS", "Error", or with a long s) is the result,
// the params or the error to the relay and to a client decoding with Go's encoding/json (mcp-go):
// its text is shown as well, not passed with its controls.
func TestRelayShowsServerTextControlsAnyKeyCase(t *testing.T) {
	r, toClient, _ := testRelay(wrapsec.Of(policy.Default(wrapsec.Name)).Tools)
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/call", tool: "t", start: time.Now()})
	r.track("3", &pending{id: json.RawMessage("3"), method: "tools/call", tool: "t", start: time.Now()})
	osc52 := `\u001b]52;c;ZWNobyBwd25lZA==\u0007`
	frames := []string{
		`{"jsonrpc":"2.0","id":1,"Result":{"content":[{"type":"text","text":"ok ` + osc52 + `"}]}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","PARAMS":{"level":"info","data":"log ` + osc52 + `"}}`,
		`{"jsonrpc":"2.0","id":3,"ERROR":{"code":-32000,"message":"bad ` + osc52 + `"}}`,
		`{"jsonrpc":"2.0","method":"notifications/message","paraMſ":{"level":"info","data":"log ` + osc52 + `"}}`,
	}
	if err := r.fromServer(strings.NewReader(strings.Join(frames, "\n") + "\n")); err != nil {
		t.Fatal(err)
	}
	c := toClient.lines()
	if len(c) != len(frames) {
		t.Fatalf("relayed %d frames, want %d: %q", len(c), len(frames), c)
	}
	for i, l := range c {
		var m struct {
			Params, Result, Error json.RawMessage
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("frame %d: %v: %s", i, err, l)
		}
		if strings.Contains(strings.ToLower(l), `\u001b`) || strings.Contains(l, `\u0007`) || !strings.Contains(l, "␛]52;c;") {
			t.Errorf("frame %d reaches the client with its controls: %s", i, l)
		}
	}
}
