package sandbox

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A server that says nothing after the client's initialize (npx fetching it on its first start)
// gets one line on wrap's stderr saying why and what to do; one that answers, or that ends
// without a word (its exit is reported instead), gets none.
func TestRelayNotesASlowServerStart(t *testing.T) {
	initialize := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	for _, server := range []string{"silent", "answers", "exits"} {
		answers := server != "silent"
		logs := &syncBuf{}
		p := policy.Default(wrapsec.Name)
		r := newRelay(p, nil, Options{Stdout: io.Discard, Logger: slog.New(slog.NewTextHandler(logs, nil))}, "s", io.Discard)
		// 50 ms to be noted; 1 s when the server answers at once, so that a loaded machine's
		// stall between the two reads below cannot pass for a silent server
		patience := 50 * time.Millisecond
		if answers {
			patience = time.Second
		}
		r.patience = patience
		if err := r.fromClient(strings.NewReader(initialize + "\n")); err != nil {
			t.Fatal(err)
		}
		switch server {
		case "answers":
			if err := r.fromServer(strings.NewReader(`{"jsonrpc":"2.0","id":0,"result":{}}` + "\n")); err != nil {
				t.Fatal(err)
			}
		case "exits":
			if err := r.fromServer(strings.NewReader("")); err != nil {
				t.Fatal(err)
			}
		}
		// a silent server's note may come late on a loaded machine; any other's would come at patience
		wait := patience + 300*time.Millisecond
		if !answers {
			wait = patience + 3*time.Second
		}
		noted := false
		for deadline := time.Now().Add(wait); !noted && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			noted = strings.Contains(strings.Join(logs.lines(), "\n"), "has not answered the client's initialize yet")
		}
		if noted == answers {
			t.Errorf("server %s; the slow-start note logged: %v (want %v): %q", server, noted, !answers, logs.lines())
		}
	}
}
