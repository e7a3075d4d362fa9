package serve

import (
	"bytes"
	"context"
	"io"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// A stdio line is decoded once (judgeMessage) and turned into the message jsonrpc.DecodeMessage
// would make of it, with the same result for every shape of request and response, odd ones
// included (a request's params that are no object are refused before: TestStdioErrorsInJSONRPCWords).
func TestDecodeOnceMatchesTheSDK(t *testing.T) {
	messages := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}`,
		`{"jsonrpc":"2.0","id":"a\u0062c","method":"tools/\u0063all","params":{ "name" : "x" ,"arguments":{}} }`,
		`{"params":{"name":"x"},"method":"ping","id":-7,"jsonrpc":"2.0"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":null}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized","params":"s"}`,
		`{"jsonrpc":"1.0","id":2,"method":"ping"}`,
		`{"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":""}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"a":1},"params":{"b":2}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","Method":"tools/call","Params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","result":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","error":5}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","error":{"code":1,"message":"m"}}`,
		`{"jsonrpc":2,"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"result":{"x":1}}`,
		`{"jsonrpc":"2.0","id":2,"error":{"code":-1,"message":"no"}}`,
		`{"jsonrpc":"2.0","result":{"x":1}}`,
		`{}`,
		` {"jsonrpc":"2.0","id":9,"method":"tools/list"} `,
		`{"jsonrpc":"2.\u0030","id":9,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud83d\ude00","method":"p\ud800"}`,
		`{"jsonrpc":null,"id":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","ID":2,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"_meta":{"x":1}}}`,
	}
	// ids the SDK would answer as another (1.5 as 1) or in Go's words, and a method that is no
	// string: refused before the SDK (TestStdioErrorsInJSONRPCWords)
	refusedFirst := []string{
		`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
		`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2,"method":5}`,
		`{"jsonrpc":"2.0","id":2,"method":null}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"\ud800","method":"p\ud800"}`, // answered as "\ufffd" (atk49b F2)
	}
	for _, m := range append(slices.Clone(messages), refusedFirst...) {
		line := []byte(m)
		p, _, _, why := judgeMessage(line)
		if slices.Contains(refusedFirst, m) {
			if why == "" {
				t.Errorf("%s: handed to the SDK, which cannot answer it as sent: want it refused first (atk48b F4, F5)", m)
			}
			continue
		}
		if why != "" {
			t.Errorf("%s: refused: %s", m, why)
			continue
		}
		want, werr := jsonrpc.DecodeMessage(line)
		got, gerr := p.message(line)
		if (werr == nil) != (gerr == nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got  %#v, %v\n want %#v, %v", m, got, gerr, want, werr)
		}
	}
}

// The decode of a 12 MiB tools/call line (judging it and making its message) allocates about
// twice the line, not five times (it was judged in two decodes of the whole line, then decoded
// whole again by the SDK's decoder, which buffers it). Red when the line is decoded again
// (mutant stdio-decode-once).
func TestStdioLineDecodedOnce(t *testing.T) {
	const big = 12 << 20
	line := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"` + strings.Repeat("A", big) + `"}}}`)
	c := &lineConn{}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	msg, bad, _ := c.decode(line)
	runtime.ReadMemStats(&after)
	if msg == nil {
		t.Fatalf("refused: %s", bad)
	}
	req := msg.(*jsonrpc.Request)
	if !bytes.Equal(req.Params, line[bytes.Index(line, []byte(`{"name"`)):len(line)-1]) {
		t.Fatalf("params not as written: %.100s", req.Params)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB tools/call line: %d MiB allocated to decode", big>>20, alloc>>20)
	if alloc > 5*big/2 {
		t.Errorf("%d MiB allocated to decode a %d MiB line, want at most %d MiB", alloc>>20, big>>20, 5*big/2>>20)
	}
}

// Reading a 12 MiB line 64 KiB at a time allocates less than three times the line (its buffer
// doubles), not five times (append grew it by a quarter each time). Red without the doubling (mutant
// stdio-line-grow).
func TestStdioLineReadWithoutRegrowth(t *testing.T) {
	const big = 12 << 20
	line := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":"` + strings.Repeat("A", big) + `"}}}` + "\n"
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	conn, err := (&LineTransport{In: io.NopCloser(strings.NewReader(line)), Out: nopWriteCloser{io.Discard}}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	msg, err := conn.Read(context.Background())
	runtime.ReadMemStats(&after)
	if err != nil || msg == nil {
		t.Fatalf("read: %v", err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("a %d MiB line read and decoded: %d MiB allocated", big>>20, alloc>>20)
	// the line's buffers (64 KiB doubled up to 16 MiB: 32 MiB) and its decode (2x); 84 MiB before
	if alloc > 6*big {
		t.Errorf("%d MiB allocated to read a %d MiB line, want at most %d MiB", alloc>>20, big>>20, 6*big>>20)
	}
}

// A request's message is made without the SDK's decoder, which takes a 32 KB buffer for each
// value it decodes (two a request): a small tools/call's decode allocates a few kB, not 64.
// Red with mutant stdio-decode-sdk.
func TestSmallRequestDecodedWithoutTheSDKsBuffers(t *testing.T) {
	line := []byte(`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"run_allowed_command","arguments":{"command":"wc","args":["in.txt"]}}}`)
	p, _, _, why := judgeMessage(line)
	if why != "" {
		t.Fatal(why)
	}
	if _, err := p.message(line); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 100 {
		if _, err := p.message(line); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / 100; per > 8<<10 {
		t.Fatalf("a small request's message took %d bytes to make, want under 8 kB (the SDK's decoder: 32 kB a value)", per)
	}
}
