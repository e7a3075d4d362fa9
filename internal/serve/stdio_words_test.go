package serve

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// startStdio runs serve over a stdio of pipes (a fakeExec, lines of at most 1 MiB): the test
// writes to inW, reads the answers from lines, and closes inW to end it (done then reports).
func startStdio(t *testing.T) (inW *io.PipeWriter, lines *bufio.Reader, done chan error) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done = make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Transport: &LineTransport{In: inR, Out: outW, Max: 1 << 20}})
	}()
	return inW, bufio.NewReader(outR), done
}

// An error answer is in JSON-RPC's words (trial46 F6): a request before initialize got code 0
// (none of JSON-RPC's codes) from the SDK, and params of the wrong JSON type an error naming Go
// types (`into Go value of type mcp.CallToolParamsRaw`). So did ids the SDK cannot echo (1.5
// answered as 1, true as "invalid ID type bool"), a method that is no string, arguments that
// are no object, a required params missing (-32603), a message past the depth bound ("not
// valid JSON") and an unknown method's params (-32602 for -32601) (atk48b F4, F5). Red with
// mutants answer-error-code-zero, params-go-words, message-id-as-sdk, message-method-go-words,
// params-required-code, params-unknown-method, message-depth-as-invalid and args-go-words.
func TestStdioErrorsInJSONRPCWords(t *testing.T) {
	inW, lines, done := startStdio(t)
	exchange := func(req string, want ...string) string {
		t.Helper()
		if _, err := io.WriteString(inW, req+"\n"); err != nil {
			t.Fatal(err)
		}
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer to %s: %v", req, err)
		}
		for _, w := range want {
			if !strings.Contains(l, w) {
				t.Errorf("answer to %s:\n%s\nlacks %s", req, l, w)
			}
		}
		for _, w := range []string{"Go value", "Go struct", "mcp.", `"code":0`, "interface {}", "float64", "handling '", "serve."} {
			if strings.Contains(l, w) {
				t.Errorf("answer to %s:\n%s\nholds %s", req, l, w)
			}
		}
		return l
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `"id":1`, `"code":-32600`, "send initialize first")
	exchange(`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`, `"id":null`, `"code":-32600`, "not an integer within")
	exchange(`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`, `"id":null`, `"code":-32600`, "not an integer within")
	exchange(`{"jsonrpc":"2.0","id":9007199254740992,"method":"ping"}`, `"id":null`, `"code":-32600`, "not an integer within")
	exchange(`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping"}`, `"id":-9007199254740991`, `"result"`)
	exchange(`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`, `"id":null`, `"code":-32600`, "not an integer within")
	exchange(`{"jsonrpc":"2.0","id":true,"method":"ping"}`, `"id":null`, `"code":-32600`, "must be a string, an integer or null, not a boolean")
	exchange(`{"jsonrpc":"2.0","id":{},"method":"ping"}`, `"id":null`, `"code":-32600`, "not an object")
	exchange(`{"jsonrpc":"2.0","id":-7,"method":"ping"}`, `"id":-7`, `"result"`)
	exchange(`{"jsonrpc":"2.0","id":8,"method":5}`, `"id":8`, `"code":-32600`, "method must be a string, not a number")
	exchange(`{"jsonrpc":"2.0","id":9,"method":"initialize","params":null}`, `"id":9`, `"code":-32602`, "params are required")
	exchange(`{"jsonrpc":"2.0","id":10,"method":"initialize"}`, `"id":10`, `"code":-32602`, "params are required")
	exchange(`{"jsonrpc":"2.0","id":11,"method":"ping","params":{"a":`+strings.Repeat("[", 100000)+strings.Repeat("]", 100000)+`}}`,
		`"id":11`, `"code":-32600`, "levels deep in one message")
	exchange(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"id":2`, `"result"`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"garbage"}`, `"id":3`, `"code":-32602`, "params must be an object, not a string")
	exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`, `"id":4`, `"code":-32602`, "params.name must be a string, not a number")
	exchange(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}`, `"id":5`, `"code":-32602`, "params must be a JSON object, not an array")
	exchange(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":null}`, `"id":6`, `"tools"`)
	exchange(`{"jsonrpc":"2.0","id":12,"method":"foo/bar","params":5}`, `"id":12`, `"code":-32601`)
	exchange(`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"fake","arguments":[]}}`, `"id":13`, "arguments must be a JSON object", "not a JSON array")
	exchange(`{"jsonrpc":"2.0","id":14,"method":"tools/call"}`, `"id":14`, `"code":-32602`, "params are required")
	// every method judged is one the SDK answers (none -32601), and each that needs params
	// is refused without them by the SDK too (mutant params-required-code: its own words)
	for m, need := range methodParams {
		exchange(`{"jsonrpc":"2.0","id":15,"method":"`+m+`","params":7}`, `"id":15`, `"code":-32602`, "params must be")
		if l := exchange(`{"jsonrpc":"2.0","id":17,"method":"`+m+`","params":{}}`, `"id":17`); strings.Contains(l, "-32601") {
			t.Errorf("%s is judged as a method this server answers, but the SDK does not know it: %s", m, l)
		}
		if need {
			exchange(`{"jsonrpc":"2.0","id":16,"method":"`+m+`","params":null}`, `"id":16`, `"code":-32602`, "params are required")
		}
	}
	exchange(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"still here"}}}`, `"id":7`, "still here")
	inW.Close()
	<-done
}
