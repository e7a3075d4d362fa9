package serve

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// afterExec is a fakeExec with work for after its calls' answers.
type afterExec struct {
	fakeExec
	hook func()
}

func (a *afterExec) AfterAnswer() { a.hook() }

// recorder keeps what went through it, once the writer under it took it.
type recorder struct {
	w   io.Writer
	mu  sync.Mutex
	buf bytes.Buffer
}

func (r *recorder) Write(p []byte) (int, error) {
	n, err := r.w.Write(p)
	r.mu.Lock()
	r.buf.Write(p[:n])
	r.mu.Unlock()
	return n, err
}

func (r *recorder) has(s string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Contains(r.buf.String(), s)
}

// serve tells an executor with work for after its calls (AfterAnswer: the allowlist's next
// namespaces) when a call's answer is out: over stdio once the answer's line is written (the
// hook sees it in what was written), over another transport as the call's handler returns. Red
// when serve never tells it, or tells it before the line is out.
func TestAfterAnswerOnceTheAnswerIsOut(t *testing.T) {
	t.Run("stdio", func(t *testing.T) {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		rec := &recorder{w: outW}
		sawCall := make(chan struct{})
		var once sync.Once
		ex := &afterExec{}
		ex.hook = func() {
			if rec.has(`"id":2,"result"`) {
				once.Do(func() { close(sawCall) })
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go Run(ctx, testPolicy(5*time.Second, 2), ex, Options{Transport: &LineTransport{In: inR, Out: struct {
			io.Writer
			io.Closer
		}{rec, outW}}})
		lines := bufio.NewReader(outR)
		go io.Copy(io.Discard, lines) // the answers read as they come
		for _, l := range []string{
			`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"x"}}}`,
		} {
			if _, err := io.WriteString(inW, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		select {
		case <-sawCall:
		case <-time.After(10 * time.Second):
			t.Fatal("the executor was not told, after the call's answer was written, that it was out")
		}
	})
	t.Run("other transports", func(t *testing.T) {
		var told atomic.Int32
		ex := &afterExec{}
		ex.hook = func() { told.Add(1) }
		cs, _ := connect(t, testPolicy(5*time.Second, 2), ex, nil)
		if _, err := call(t, context.Background(), cs, map[string]any{"echo": "x"}); err != nil {
			t.Fatal(err)
		}
		if told.Load() == 0 {
			t.Fatal("the call returned and the executor was not told its answer was out")
		}
	})
}
