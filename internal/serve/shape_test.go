package serve

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Hostile peer: a message whose size is within the line limit but whose JSON shape is huge
// (_meta holding a million values: the SDK decodes every part of a message) is refused from
// its raw bytes with its own id; heap stays small, and the session goes on. Red without the
// message bound (mutant message-shape): the SDK decodes it all.
func TestStdioMessageShapeBound(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Transport: &LineTransport{In: inR, Out: outW}})
	}()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	answer := func() string {
		t.Helper()
		l, err := lines.ReadString('\n')
		if err != nil {
			t.Fatalf("no answer: %v", err)
		}
		return l
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	answer()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	runtime.GC()
	before := heapInUse()
	zeros := strings.Repeat("0,", 1<<20) + "0"
	for i, msg := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"x":[` + zeros + `]}}}`,
		`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"hi"},"_meta":{"x":[` + zeros + `]}}}`,
	} {
		send(msg)
		l := answer()
		if want := []string{`"id":` + string(rune('7'+i)), "-32600", "refused unread"}; !strings.Contains(l, want[0]) || !strings.Contains(l, want[1]) || !strings.Contains(l, want[2]) {
			t.Fatalf("a 1M-value message: %.300s", l)
		}
	}
	runtime.GC()
	after := heapInUse()
	t.Logf("heap in use: %d KiB before, %d KiB after two 2 MiB messages of a million values each", before>>10, after>>10)
	send(`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"still here"}}}`)
	if l := answer(); !strings.Contains(l, "still here") {
		t.Fatalf("the session after the refusals: %.300s", l)
	}
	inW.Close()
	<-done
}

// Over HTTP the same bound holds, and a JSON-RPC batch (protocol 2025-03-26: one POST could
// carry thousands of calls past every per-request bound) is refused before the SDK sees it.
func TestHTTPMessageShapeAndBatch(t *testing.T) {
	url, _, _ := startHTTP(t, &fakeExec{}, HTTPOptions{})
	post := func(body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	batch := `[` + strings.Repeat(`{"jsonrpc":"2.0","method":"notifications/initialized"},`, 1000) + `{"jsonrpc":"2.0","id":1,"method":"ping"}]`
	if code, b := post(batch); code != 400 || !strings.Contains(b, "batches are not supported") || !strings.Contains(b, "-32600") {
		t.Errorf("a batch: %d %.300s", code, b)
	}
	zeros := strings.Repeat("0,", 1<<20) + "0"
	if code, b := post(`{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"_meta":{"x":[` + zeros + `]}}}`); code != 400 || !strings.Contains(b, `"id":5`) || !strings.Contains(b, "refused unread") {
		t.Errorf("a 1M-value message: %d %.300s", code, b)
	}
	// control: a plain initialize is served
	if code, b := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); code != 200 || !strings.Contains(b, "serverInfo") {
		t.Errorf("initialize: %d %.300s", code, b)
	}
}
