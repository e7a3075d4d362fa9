package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/bounds"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// At most MaxLogLines lines reach stderr in a LogWindow, whichever logger made from the limited
// handler writes them; the next window's first line is preceded by the count of those dropped.
func TestLogLineRateBounded(t *testing.T) {
	var buf testenv.LockedBuffer
	clock := time.Unix(1e9, 0)
	h := LimitLog(slog.NewTextHandler(&buf, nil)).(*limitHandler)
	h.st.now = func() time.Time { return clock }
	log := slog.New(h)
	sub := log.With("session", "s1")
	for i := range 5 * bounds.MaxLogLines {
		if i%2 == 0 {
			log.Info("flood", "i", i)
		} else {
			sub.Info("flood", "i", i)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != bounds.MaxLogLines {
		t.Fatalf("%d lines in one window, want %d", n, bounds.MaxLogLines)
	}
	clock = clock.Add(bounds.LogWindow)
	log.Info("after")
	out := buf.String()
	want := fmt.Sprintf("%d log lines dropped", 4*bounds.MaxLogLines)
	if !strings.Contains(out, want) || !strings.HasSuffix(strings.TrimSpace(out), `msg=after`) {
		t.Errorf("the next window: %q, want %q then the line", out[max(0, len(out)-300):], want)
	}
}

// A client repeating what the SDK logs (each duplicate notifications/initialized is an ERROR
// line) grows serve's stderr by at most MaxLogLines lines a window, not a line a message.
func TestLogFloodFromAClientBounded(t *testing.T) {
	var buf testenv.LockedBuffer
	log := slog.New(LimitLog(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: ClipLogAttr})))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), testPolicy(5*time.Second, 2), &fakeExec{},
			Options{Logger: log, Transport: &LineTransport{In: inR, Out: outW}})
	}()
	go io.Copy(io.Discard, bufio.NewReader(outR))
	io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	const flood = 2000
	for range flood {
		io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
	}
	io.WriteString(inW, `{"jsonrpc":"2.0","id":2,"method":"ping"}`+"\n")
	inW.Close()
	<-done
	lines := strings.Count(buf.String(), "\n")
	if lines < 10 {
		t.Fatalf("control: %d lines logged for %d repeated initialized notifications: the SDK no longer logs them, so this test attacks nothing", lines, flood)
	}
	if lines > bounds.MaxLogLines+5 {
		t.Errorf("%d log lines for %d messages, want at most %d in a window", lines, flood, bounds.MaxLogLines)
	}
}
