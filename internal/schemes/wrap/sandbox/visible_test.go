package sandbox

import (
	"encoding/json"
	"log/slog"
	"os"
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
// the params or the error to the relay and to a client decoding with Go's encoding/json (mcp-go),
// but nothing to a client reading keys as written: the frame is dropped (atk38 F1; its text was
// shown and passed before), a tracked call answered with the rule, and no control reaches the
// client.
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
	if len(c) != 2 || !strings.Contains(c[0], `"id":1`) || !strings.Contains(c[1], `"id":3`) {
		t.Fatalf("relayed %q, want the two calls answered with %s and the notifications dropped", c, RuleAmbiguousKeys)
	}
	for i, l := range c {
		if !strings.Contains(l, RuleAmbiguousKeys) || strings.Contains(strings.ToLower(l), `\u001b`) || strings.Contains(l, `\u0007`) || strings.Contains(l, "ZWNob") {
			t.Errorf("frame %d reaches the client: %s", i, l)
		}
	}
}

// A tool's schema keeps its patterns and data as they were, but its parameters' names,
// descriptions and titles are text a client lists under the tool: their controls are shown.
func TestRelayShowsServerSchemaDescriptions(t *testing.T) {
	r, toClient, _ := testRelay(wrapsec.Of(policy.Default(wrapsec.Name)).Tools)
	r.track("2", &pending{id: json.RawMessage("2"), method: "tools/list", start: time.Now()})
	osc52 := `\u001b]52;c;ZWNobyBwd25lZA==\u0007`
	frame := `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"t","description":"d","inputSchema":{"type":"object","title":"T ` + osc52 +
		`","properties":{"p":{"type":"string","description":"path ` + osc52 + `","pattern":"^[^\u0000-\u001f]*$","default":{"description":"\u001b"}},` +
		`"description":{"type":"string","enum":["\u001b"]},"q \u001b[8m":{"type":"string"}}},"outputSchema":{"type":"object","description":"out ` + osc52 + `"}}]}}`
	if err := r.fromServer(strings.NewReader(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	c := toClient.lines()
	if len(c) != 1 {
		t.Fatalf("relayed %d frames, want 1: %q", len(c), c)
	}
	var m struct {
		Result struct {
			Tools []struct {
				InputSchema  map[string]any `json:"inputSchema"`
				OutputSchema map[string]any `json:"outputSchema"`
			} `json:"tools"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(c[0]), &m); err != nil || len(m.Result.Tools) != 1 {
		t.Fatalf("%v: %s", err, c[0])
	}
	in := m.Result.Tools[0].InputSchema
	props := in["properties"].(map[string]any)
	p := props["p"].(map[string]any)
	shown := "␛]52;c;ZWNobyBwd25lZA==␇"
	if in["title"] != "T "+shown || p["description"] != "path "+shown || m.Result.Tools[0].OutputSchema["description"] != "out "+shown {
		t.Errorf("a schema's description or title reaches the client with its controls: %s", c[0])
	}
	if _, ok := props["q ␛[8m"]; !ok {
		t.Errorf("a property's name reaches the client with its controls: %s", c[0])
	}
	if p["pattern"] != "^[^\x00-\x1f]*$" || p["default"].(map[string]any)["description"] != "\x1b" ||
		props["description"].(map[string]any)["enum"].([]any)[0] != "\x1b" {
		t.Errorf("a schema's pattern or data changed: %s", c[0])
	}
}

// --explain quotes a failed call's answer on the user's terminal: a raw 8-bit CSI (valid in a
// JSON string) or DEL in it is shown, not done.
func TestRelayExplainShowsServerControls(t *testing.T) {
	p := policy.Default(wrapsec.Name)
	toClient, toServer, stderr := &syncBuf{}, &syncBuf{}, &syncBuf{}
	r := newRelay(p, nil, Options{Stdout: toClient, Stderr: stderr, ExplainDenials: true, Logger: slog.New(slog.DiscardHandler)}, "s", toServer)
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/call", tool: "t", start: time.Now()})
	frame := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"isError\":true,\"content\":[{\"type\":\"text\",\"text\":\"open: Permission denied \u009b2J\u009b8m\x7f\"}]}}"
	if err := r.fromServer(strings.NewReader(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	stderr.mu.Lock()
	out := stderr.b.String()
	stderr.mu.Unlock()
	if !strings.Contains(out, "Permission denied") {
		t.Fatalf("no explanation: %q", out)
	}
	if strings.Contains(out, "\u009b") || strings.Contains(out, "\x7f") {
		t.Errorf("the explanation carries the server's controls: %q", out)
	}
}

// Only a string whose shown form differs is written again: a cursor or token the client hands
// back to the server keeps its bytes (a lone surrogate, a byte that is not UTF-8), and numbers,
// key order and spacing stay as the server wrote them.
func TestVisibleFrameKeepsWhatItDoesNotShow(t *testing.T) {
	kept := []string{
		`"nextCursor": "c\ud800x\u0000\u001b` + "\xff" + `"`,
		`"_meta":{"progressToken":1.50,"k":"\u001b[8m"}`,
		`"structuredContent":{"n":1e2,"s":"\u001b]52;c;eA==\u0007"}`,
		`"inputSchema":{"type":"object","pattern":"\u001b","default":"\u001b"}`,
	}
	in := `{"id":7, "jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a\u001b]52;c;eA==\u0007b"}],` +
		strings.Join(kept, ",") + `}}`
	out := string(visibleFrame([]byte(in)))
	if strings.Contains(out, `a\u001b]52`) || !strings.Contains(out, `"text":"a`) {
		t.Errorf("the text's OSC 52 was not shown: %s", out)
	}
	for _, k := range kept {
		if !strings.Contains(out, k) {
			t.Errorf("changed, want byte for byte %s\n in: %s", k, out)
		}
	}
	if !strings.HasPrefix(out, `{"id":7, "jsonrpc":"2.0","result":{"content":[{"type":"text","text":"a`) {
		t.Errorf("key order or spacing changed: %s", out)
	}
	if !json.Valid([]byte(strings.ReplaceAll(out, "\xff", ""))) {
		t.Errorf("not JSON: %s", out)
	}
}

// Whatever the server sends, a JSON frame stays JSON and a shown frame has nothing left to show.
func FuzzVisibleFrame(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"\u001b]52;c;eA==\u0007"}]}}`))
	f.Add([]byte(`{"method":"notifications/message","params":{"data":["\r",{"description":"\u009b"}],"inputSchema":{"title":"\u0007"}}}`))
	f.Add([]byte(`{"Result":{"tools":[{"name":"t","inputSchema":{"properties":{"a":{"description":"\u001b[8m"}}}}]}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out := visibleFrame(in)
		if !json.Valid(in) {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("not JSON any more:\n in: %q\nout: %q", in, out)
		}
		if again := visibleFrame(out); string(again) != string(out) {
			t.Fatalf("shown twice differs:\n out: %q\nagain: %q", out, again)
		}
	})
}

// A write the kernel refused in a wrap.write directory is not a path outside wrap.write: as
// root the server runs as nobody, and a directory root owns (0755) refuses it by its mode
// (trial35 F2). --explain-denials says so, with the chown, and quotes the answer once though
// it holds two marks ("EACCES: permission denied", trial35 F8). Red with mutants
// wrap-write-owner-unchecked, wrap-explain-quotes-twice.
func TestRelayExplainNamesAnUnwritableWriteDir(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		os.Chmod(dir, 0o755) // root's, as the trial's notes/
	} else {
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
	}
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Write = []string{dir}
	out := explainedWriteRefusal(t, p, dir+"/n2.txt")
	if !strings.Contains(out, "is in wrap.write but not") || strings.Contains(out, "a path outside wrap.read/wrap.write") {
		t.Errorf("the refusal in a wrap.write directory its uid cannot write is blamed on the policy's paths: %q", out)
	}
	if os.Geteuid() == 0 && !strings.Contains(out, "chown -R 65534:65534 "+dir) {
		t.Errorf("no chown fix: %q", out)
	}
	if n := strings.Count(out, "n2.txt"); n != 1 {
		t.Errorf("the answer is quoted %d times, want once: %q", n, out)
	}
}

// A write refused under a wrap.read path no wrap.write holds is the policy's choice, named with
// the key that changes it, not "a path outside wrap.read/wrap.write" (trial39 F5). Red with
// mutant wrap-explain-read-only.
func TestRelayExplainNamesAReadOnlyPath(t *testing.T) {
	dir := t.TempDir()
	p := policy.Default(wrapsec.Name)
	wrapsec.Of(p).Read = []string{dir}
	out := explainedWriteRefusal(t, p, dir+"/new.md")
	if !strings.Contains(out, "(wrap.read) but not write") || !strings.Contains(out, "add "+dir+" to wrap.write") || strings.Contains(out, "a path outside wrap.read/wrap.write") {
		t.Errorf("a write refused under a wrap.read path is not named as such: %q", out)
	}
}

// explainedWriteRefusal is what --explain-denials writes for a write_file answer saying the
// kernel refused path (EACCES), under policy p.
func explainedWriteRefusal(t *testing.T, p *policy.Policy, path string) string {
	t.Helper()
	toClient, toServer, stderr := &syncBuf{}, &syncBuf{}, &syncBuf{}
	r := newRelay(p, nil, Options{Stdout: toClient, Stderr: stderr, ExplainDenials: true, Logger: slog.New(slog.DiscardHandler)}, "s", toServer)
	r.track("1", &pending{id: json.RawMessage("1"), method: "tools/call", tool: "write_file", start: time.Now()})
	frame := `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"EACCES: permission denied, open '` + path + `'"}]}}`
	if err := r.fromServer(strings.NewReader(frame + "\n")); err != nil {
		t.Fatal(err)
	}
	stderr.mu.Lock()
	defer stderr.mu.Unlock()
	return stderr.b.String()
}
