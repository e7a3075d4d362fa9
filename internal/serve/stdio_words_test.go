package serve

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// An error answer is in JSON-RPC's words (trial46 F6): a request before initialize got code 0
// (none of JSON-RPC's codes) from the SDK, and params of the wrong JSON type an error naming Go
// types (`into Go value of type mcp.CallToolParamsRaw`). Red with mutants
// answer-error-code-zero and params-go-words.
func TestStdioErrorsInJSONRPCWords(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Transport: &LineTransport{In: inR, Out: outW, Max: 1 << 20}})
	}()
	lines := bufio.NewReader(outR)
	exchange := func(req string, want ...string) {
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
		for _, w := range []string{"Go value", "Go struct", "mcp.", `"code":0`} {
			if strings.Contains(l, w) {
				t.Errorf("answer to %s:\n%s\nholds %s", req, l, w)
			}
		}
	}
	exchange(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, `"id":1`, `"code":-32600`, "send initialize first")
	exchange(`{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"id":2`, `"result"`)
	if _, err := io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	exchange(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":"garbage"}`, `"id":3`, `"code":-32602`, "params must be an object, not a string")
	exchange(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`, `"id":4`, `"code":-32602`, "params.name must be a string, not a number")
	exchange(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":[1]}`, `"id":5`, `"code":-32602`, "params must be a JSON object, not an array")
	exchange(`{"jsonrpc":"2.0","id":6,"method":"tools/list","params":null}`, `"id":6`, `"tools"`)
	exchange(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"still here"}}}`, `"id":7`, "still here")
	inW.Close()
	<-done
}
