package serve

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// A hostile stdio client cannot make serve build answers (or errors) much larger than its
// request: an id over MaxIDBytes, a message other than a tools/call over MaxOtherMessage and a
// tools/call whose params do not decode are refused before the SDK sees them (its errors quote
// the method, a name or the whole params %q-quoted: 15 MiB lines of 0x7f bytes made 78 MB
// answers, four unread took serve past 1.4 GB), and every error answer's message is clipped to
// MaxErrorText. Red without the refusals (mutant message-echo: the answers echo the id or the
// method, and the bad params allocate many times the line) and without the clip (mutant
// answer-error-clip: a resource's URI and a prompt's name come back whole).
func TestStdioAnswersDoNotEchoUnbounded(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Transport: &LineTransport{In: inR, Out: outW}})
	}()
	lines := bufio.NewReaderSize(outR, 1<<20)
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

	// params the SDK cannot decode, with 4 MiB of DEL (each %q-quoted as \x7f, then JSON-escaped)
	const big = 4 << 20
	dels := strings.Repeat("\x7f", big)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5,"arguments":{},"x":"` + dels + `"}}`)
	l := answer()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a tools/call with %d bytes of params that do not decode: answer %d bytes, %d MiB allocated", big, len(l), alloc>>20)
	if len(l) > 1<<10 || !strings.Contains(l, `"id":2`) || !strings.Contains(l, "-32602") {
		t.Errorf("bad params: answer of %d bytes: %.300s", len(l), l)
	}
	if alloc > 12*big {
		t.Errorf("bad params of %d bytes: %d MiB allocated to answer them, want under %d MiB", big, alloc>>20, 12*big>>20)
	}

	for _, c := range []struct{ what, msg, want string }{
		{"an id of 2 KiB", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 2<<10) + `","method":"ping"}`, `"id":null`},
		{"a method of 1 MiB", `{"jsonrpc":"2.0","id":3,"method":"` + strings.Repeat("\xff", 1<<20) + `"}`, `"id":3`},
		{"a prompts/get of 1 MiB", `{"jsonrpc":"2.0","id":4,"method":"prompts/get","params":{"name":"` + strings.Repeat("p", 1<<20) + `"}}`, `"id":4`},
	} {
		send(c.msg)
		if l := answer(); len(l) > 1<<10 || !strings.Contains(l, c.want) || !strings.Contains(l, "-32600") {
			t.Errorf("%s: answer of %d bytes: %.300s", c.what, len(l), l)
		}
	}
	// under MaxOtherMessage: answered by the SDK, its error clipped
	for i, c := range []struct{ what, msg string }{
		{"a resources/read of 60 KiB", `{"jsonrpc":"2.0","id":5,"method":"resources/read","params":{"uri":"` + strings.Repeat("u", 60<<10) + `"}}`},
		{"a prompts/get of 60 KiB", `{"jsonrpc":"2.0","id":6,"method":"prompts/get","params":{"name":"` + strings.Repeat("p", 60<<10) + `"}}`},
	} {
		send(c.msg)
		if l := answer(); len(l) > MaxErrorText+256 || !strings.Contains(l, `"id":`+string(rune('5'+i))) || !strings.Contains(l, `"error"`) {
			t.Errorf("%s: answer of %d bytes: %.300s", c.what, len(l), l)
		}
	}
	// a tools/call may be large; the session goes on
	arg := strings.Repeat("a", 200<<10)
	send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"` + arg + `"}}}`)
	if l := answer(); !strings.Contains(l, `"id":7`) || !strings.Contains(l, arg) {
		t.Errorf("a 200 KiB call: %.300s", l)
	}
	send(`{"jsonrpc":"2.0","id":"req-8","method":"ping"}`)
	if l := answer(); !strings.Contains(l, `"id":"req-8","result"`) {
		t.Errorf("a ping after: %.300s", l)
	}
	inW.Close()
	<-done
}

// Over HTTP the same refusals hold, in a live session (before the SDK answers them): the
// answer is small whatever the request quotes. Red without them (mutant message-echo).
func TestHTTPAnswersDoNotEchoUnbounded(t *testing.T) {
	post := liveHTTPSession(t)
	for _, c := range []struct{ what, msg, want string }{
		{"bad params of 1 MiB", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":5,"x":"` + strings.Repeat("\x7f", 1<<20) + `"}}`, `"id":2`},
		{"an id of 2 KiB", `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 2<<10) + `","method":"ping"}`, `"id":null`},
		{"a method of 1 MiB", `{"jsonrpc":"2.0","id":3,"method":"` + strings.Repeat("\xff", 1<<20) + `"}`, `"id":3`},
	} {
		if code, b := post(c.msg); code != 400 || len(b) > 1<<10 || !strings.Contains(b, c.want) {
			t.Errorf("%s: %d, answer of %d bytes: %.300s", c.what, code, len(b), b)
		}
	}
	if code, b := post(`{"jsonrpc":"2.0","id":9,"method":"ping"}`); code != 200 || !strings.Contains(b, `"id":9`) {
		t.Errorf("a ping after: %d %.300s", code, b)
	}
}

// serve's stderr log lines are bounded: the SDK logs what a client sent (here a log level of
// 60 KiB; a method name before initialize, a URI), and each value is clipped to MaxLogValue.
// Red without the clip (mutant log-value-clip).
func TestLogLinesBounded(t *testing.T) {
	var buf testenv.LockedBuffer
	log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: ClipLogAttr}))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Logger: log, Transport: &LineTransport{In: inR, Out: outW}})
	}()
	lines := bufio.NewReader(outR)
	send := func(s string) {
		t.Helper()
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := lines.ReadString('\n'); err != nil {
			t.Fatalf("no answer: %v", err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"` + strings.Repeat("m", 60<<10) + `"}`) // before initialize: logged
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"` + strings.Repeat("l", 60<<10) + `"}}`)
	inW.Close()
	<-done
	longest := 0
	for _, l := range strings.Split(buf.String(), "\n") {
		longest = max(longest, len(l))
	}
	if !strings.Contains(buf.String(), "llllllll") || !strings.Contains(buf.String(), "mmmmmmmm") {
		t.Fatalf("the SDK no longer logs the values this test sends: %.2000s", buf.String())
	}
	if longest > MaxLogValue+512 {
		t.Errorf("a log line of %d bytes, want at most %d", longest, MaxLogValue+512)
	}
}
