package serve

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// answeredAsSent are messages whose answers serve made up or lost (atk49b), with what their
// answer holds, over stdio and HTTP alike:
//   - F2: a string id that is not Unicode text (a lone surrogate escape, bytes that are not
//     UTF-8) was answered as "\ufffd", so "\ud800" and "\udfff" were one id;
//   - F3: a line that is no JSON was answered with an id the scan made of a number's start
//     ("id":01 as 0, 0x10 as 0) or one the SDK reads as another (1.5);
//   - F4: over HTTP a body of one message and more (a second message, garbage) was answered
//     as the first, the rest dropped; stdio answers such a line -32700;
//   - a notification sent with an id (notifications/cancelled naming itself cancelled itself,
//     -32603 "context canceled"), an unknown log level (answered {}), params of the wrong JSON
//     type (answered in Go's words: mcp.ListToolsParams.cursor).
var answeredAsSent = []struct{ msg, want string }{
	{`{"jsonrpc":"2.0","id":"\ud800","method":"ping"}`, `"id":null|-32600|not Unicode text|use a string of UTF-8 text`},
	{`{"jsonrpc":"2.0","id":"\udfff","method":"ping"}`, `"id":null|-32600|not Unicode text`},
	{`{"jsonrpc":"2.0","id":"a\udc00\ud800","method":"ping"}`, `"id":null|-32600|not Unicode text`},
	{`{"jsonrpc":"2.0","id":"\ud800\\u0041","method":"ping"}`, `"id":null|-32600|not Unicode text`},
	{"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\xfe\",\"method\":\"ping\"}", `"id":null|-32600|not Unicode text`},
	{`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"ping"}`, `"id":"😀"|"result"`},
	{`{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}`, `"id":"\\ud800"|"result"`},
	{`{"jsonrpc":"2.0","id":"\ufffd","method":"ping"}`, `"id":"�"|"result"`},
	{`{"jsonrpc":"2.0","id":01,"method":"ping"}`, `"id":null|-32700`},
	{`{"jsonrpc":"2.0","id":-01,"method":"ping"}`, `"id":null|-32700`},
	{`{"jsonrpc":"2.0","id":0x10,"method":"ping"}`, `"id":null|-32700`},
	{`{"jsonrpc":"2.0","id":1.5,"method":"ping"`, `"id":null|-32700`},
	{`{"jsonrpc":"2.0","id":"\ud800","method":"ping"`, `"id":null|-32700`},
	{`{"jsonrpc":"2.0","id":7,"method":"ping"`, `"id":7|-32700`},
	{`{"jsonrpc":"2.0","id":29,"method":"ping"} {"jsonrpc":"2.0","id":30,"method":"ping"}`, `"id":29|-32700`},
	{`{"jsonrpc":"2.0","id":31,"method":"ping"}garbage`, `"id":31|-32700`},
	{`{"jsonrpc":"2.0","id":25,"method":"notifications/cancelled","params":{"requestId":25}}`, `"id":25|-32600|notifications/cancelled is a notification`},
	{`{"jsonrpc":"2.0","id":26,"method":"notifications/initialized"}`, `"id":26|-32600|is a notification`},
	{`{"jsonrpc":"2.0","id":27,"method":"logging/setLevel","params":{"level":"nope"}}`, `"id":27|-32602|params.level must be one of debug, info, notice`},
	{`{"jsonrpc":"2.0","id":28,"method":"logging/setLevel","params":{}}`, `"id":28|-32602|params.level must be one of`},
	{`{"jsonrpc":"2.0","id":32,"method":"logging/setLevel","params":{"level":"warning"}}`, `"id":32|"result"`},
	{`{"jsonrpc":"2.0","id":33,"method":"tools/list","params":{"cursor":5}}`, `"id":33|-32602|params.cursor must be a string, not a number`},
	{`{"jsonrpc":"2.0","id":34,"method":"prompts/get","params":{"name":"x","arguments":[]}}`, `"id":34|-32602|params.arguments must be an object, not an array`},
	{`{"jsonrpc":"2.0","id":35,"method":"initialize","params":{"protocolVersion":5,"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"id":35|-32602|params.protocolVersion must be a string`},
	{`{"jsonrpc":"2.0","id":36,"method":"tools/list","params":{"cursor":""}}`, `"id":36|"tools"`},
}

// checkAnsweredAsSent says what is wrong with answer, to msg (case c of answeredAsSent).
func checkAnsweredAsSent(t *testing.T, how, msg, answer, want string) {
	t.Helper()
	for _, w := range strings.Split(want, "|") {
		if !strings.Contains(answer, w) {
			t.Errorf("%s %s:\n%.400s\nlacks %s", how, msg, answer, w)
		}
	}
	for _, w := range []string{"Go value", "Go struct", "mcp.", "context canceled", `"code":-32603`} {
		if strings.Contains(answer, w) {
			t.Errorf("%s %s:\n%.400s\nholds %s", how, msg, answer, w)
		}
	}
}

// Over stdio. Red with mutants message-id-string-any (F2), stdio-scan-id-prefix and
// stdio-error-id-any (F3), message-notification-id, params-log-level-any and params-type-go-words.
func TestStdioAnswersAsSent(t *testing.T) {
	inW, lines, done := startStdio(t)
	exchange := func(req string) string {
		t.Helper()
		if _, err := io.WriteString(inW, req+"\n"); err != nil {
			t.Fatal(err)
		}
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	for _, c := range answeredAsSent {
		checkAnsweredAsSent(t, "answer over stdio to", c.msg, exchange(c.msg), c.want)
	}
	if l := exchange(`{"jsonrpc":"2.0","id":"after","method":"ping"}`); !strings.Contains(l, `"id":"after"`) || !strings.Contains(l, `"result"`) {
		t.Errorf("a ping after: %s", l)
	}
	inW.Close()
	<-done
}

// Over HTTP, where a body of one message and more is refused too (F4). Red with the mutants of
// TestStdioAnswersAsSent that are not stdio's, and http-trailing-data.
func TestHTTPAnswersAsSent(t *testing.T) {
	post := liveHTTPSession(t)
	for _, c := range answeredAsSent {
		code, b := post(c.msg)
		checkAnsweredAsSent(t, "answer over HTTP to", c.msg, b, c.want)
		if refused := strings.Contains(c.want, "-32"); refused != (code == http.StatusBadRequest) && (refused || code != http.StatusOK) {
			t.Errorf("%s: status %d", c.msg, code)
		}
	}
	if code, b := post(`{"jsonrpc":"2.0","id":41,"method":"ping"}{}`); code != 400 || !strings.Contains(b, "send one JSON-RPC message per request") {
		t.Errorf("a ping with a second value after it: %d %.300s", code, b)
	}
	if code, b := post(`{"jsonrpc":"2.0","id":40,"method":"ping"}` + " \r\n\t "); code != 200 || !strings.Contains(b, `"id":40`) || !strings.Contains(b, `"result"`) {
		t.Errorf("a ping with whitespace after it: %d %.300s", code, b)
	}
}
