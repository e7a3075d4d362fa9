package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// stdioSession runs serve on pipes and initializes the session; the caller writes to in and
// reads out (or not).
func stdioSession(t *testing.T, timeout time.Duration, conc int) (in *io.PipeWriter, out *bufio.Reader, outR *io.PipeReader) {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, testPolicy(timeout, conc), &fakeExec{}, Options{Transport: &LineTransport{In: inR, Out: outW}})
	}()
	t.Cleanup(func() {
		go io.Copy(io.Discard, outR) // answers still owed are read, so serve can stop
		cancel()
		inW.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Error("Run did not stop")
		}
	})
	out = bufio.NewReaderSize(outR, 1<<20)
	send(t, inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if l, err := out.ReadString('\n'); err != nil || !strings.Contains(l, `"id":1`) {
		t.Fatalf("initialize: %q %v", l, err)
	}
	send(t, inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return inW, out, outR
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// stalled waits until n stops growing (serve stopped reading) and returns it.
func stalled(n *atomic.Int64) int64 {
	last, still := int64(-1), 0
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		v := n.Load()
		if v == last {
			if still++; still >= 10 {
				return v
			}
		} else {
			last, still = v, 0
		}
	}
	return n.Load()
}

// A client that writes requests and never reads the answers holds a bounded number of them:
// serve stops reading stdin at MaxInflight unanswered requests, and the session goes on once
// the client reads.
func TestStdioInflightBoundedWhenAnswersUnread(t *testing.T) {
	in, out, _ := stdioSession(t, 10*time.Second, 2)
	const total = 10000
	base := heapInUse()
	var written atomic.Int64
	wrote := make(chan error, 1)
	go func() {
		for i := range total {
			if _, err := fmt.Fprintf(in, `{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`+"\n", 100+i); err != nil {
				wrote <- err
				return
			}
			written.Add(1)
		}
		wrote <- nil
	}()
	n := stalled(&written)
	grew := int64(heapInUse()) - int64(base)
	t.Logf("serve read %d of %d tools/list lines before it stopped reading; heap grew %d KiB", n, total, grew>>10)
	// MaxInflight requests, plus what one 64 KiB read buffer holds (about 800 such lines).
	if n >= 2000 {
		t.Fatalf("serve read %d lines while no answer was read: the requests in flight are unbounded", n)
	}
	// The client reads: every answer comes, and the session still works.
	seen := 0
	for seen < total {
		l, err := out.ReadString('\n')
		if err != nil {
			t.Fatalf("after %d answers: %v", seen, err)
		}
		if strings.Contains(l, `"tools"`) {
			seen++
		}
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	send(t, in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"still here"}}}`)
	if l, err := out.ReadString('\n'); err != nil || !strings.Contains(l, "still here") {
		t.Fatalf("the call after the flood: %q %v", l, err)
	}
}

// With the slots busy, big calls queue: serve stops reading at MaxInflight requests
// (400 calls of 251 KB) or MaxInflightBytes (60 calls of 1 MiB), whichever comes first.
func TestStdioInflightBoundsQueuedCalls(t *testing.T) {
	for _, c := range []struct {
		name  string
		calls int
		size  int
		bound int64
	}{
		{"count", 400, 251 << 10, MaxInflight*(251<<10+200) + 2<<20},
		{"bytes", 60, 1 << 20, MaxInflightBytes + 3<<20},
	} {
		t.Run(c.name, func(t *testing.T) {
			in, out, _ := stdioSession(t, time.Minute, 1)
			send(t, in, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"fake","arguments":{"sleep":"1m"}}}`)
			base := heapInUse()
			var written atomic.Int64
			pad := strings.Repeat("x", c.size)
			go func() {
				for i := range c.calls {
					line := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"%s"}}}`+"\n", 100+i, pad)
					if _, err := io.WriteString(in, line); err != nil {
						return
					}
					written.Add(int64(len(line)))
				}
			}()
			n := stalled(&written)
			grew := int64(heapInUse()) - int64(base)
			t.Logf("serve read %d MiB of %d MiB of queued calls; heap grew %d MiB", n>>20, int64(c.calls*c.size)>>20, grew>>20)
			if n > c.bound {
				t.Fatalf("serve read %d bytes of calls waiting for a slot (bound %d)", n, c.bound)
			}
			_ = out
		})
	}
}

// An id the scan of a refused line finds but that is no JSON (0123, "\q") is answered as null:
// echoed, it made the answer no JSON, and Marshal's error a blank line (attack round atk32, N1).
func TestErrorLineWithAnIDThatIsNoJSON(t *testing.T) {
	for id, want := range map[string]string{"0123": "null", `"\q"`: "null", "-00": "null", "7": "7", `"a"`: `"a"`} {
		b := errorLine(json.RawMessage(id), -32700, "parse error")
		var m struct{ ID json.RawMessage }
		if err := json.Unmarshal(b, &m); err != nil || string(m.ID) != want {
			t.Errorf("id %s: %q (%v), want id %s", id, b, err, want)
		}
	}
}
