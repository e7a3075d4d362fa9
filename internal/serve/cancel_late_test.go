package serve

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// A cancel that comes while a call's writes are being applied does not undo them: the answer
// and the audit say what reached the workspace, by every way a call is cancelled (atk29 F1:
// both read "cancelled", nothing said of the 20 000 files that landed).
func TestCancelledCallReportsWritesApplied(t *testing.T) {
	for _, c := range []struct {
		name     string
		shutdown bool
		cancel   func(shutdown bool) func(t *testing.T, f *fakeExec, al *audit.Log) string // the answer's text, "" when none is read
	}{
		{"stdio, the client's cancel", false, cancelLateStdio},
		{"stdio, serve's shutdown", true, cancelLateStdio},
		{"HTTP, the client's cancel", false, cancelLateHTTP},
		{"HTTP, the end of shutdown's grace", true, cancelLateHTTP},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			al, err := audit.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer al.Close()
			answer := c.cancel(c.shutdown)(t, &fakeExec{}, al)
			var es []audit.Entry
			for end := time.Now().Add(10 * time.Second); len(es) == 0 && time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				es = outcomes(auditLines(t, path, 0))
			}
			if len(es) != 1 || es[0].Decision != "cancelled" {
				t.Fatalf("the call is audited as %+v, want one outcome: cancelled", es)
			}
			if w := es[0].Workspace; w == nil || w.Committed != 3 {
				t.Fatalf("the audit of a cancelled call whose 3 changes were applied has workspace %+v (reason %q)", w, es[0].Reason)
			}
			if strings.Contains(es[0].Reason, "shutting down") != c.shutdown {
				t.Errorf("the audit's reason names the wrong canceller: %q", es[0].Reason)
			}
			if !strings.Contains(es[0].Reason, "applied to the workspace") {
				t.Errorf("the audit's reason does not say the writes were applied: %q", es[0].Reason)
			}
			if answer != "" && (!strings.Contains(answer, "too late to hold back") || !strings.Contains(answer, "3 change")) {
				t.Errorf("the answer does not say the writes were applied: %.600s", answer)
			}
		})
	}
}

// cancelLateStdio runs serve over a line transport, starts a call whose commit the cancel
// finds begun, and cancels it by notifications/cancelled or by ending serve.
func cancelLateStdio(shutdown bool) func(t *testing.T, f *fakeExec, al *audit.Log) string {
	return func(t *testing.T, f *fakeExec, al *audit.Log) string {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		done := make(chan error, 1)
		go func() {
			done <- Run(ctx, testPolicy(time.Minute, 2), f, Options{Audit: al, Transport: &LineTransport{In: inR, Out: outW, Max: 1 << 20}})
			outW.Close()
		}()
		lines := bufio.NewReader(outR)
		send := func(s string) {
			if _, err := io.WriteString(inW, s+"\n"); err != nil {
				t.Fatal(err)
			}
		}
		send(initBody)
		if _, err := lines.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		send(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"fake","arguments":{"late":3}}}`)
		for f.running.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if shutdown {
			stop()
		} else {
			send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7,"reason":"test"}}`)
		}
		answer, _ := lines.ReadString('\n')
		inW.Close()
		go io.Copy(io.Discard, outR)
		<-done
		if shutdown {
			return "" // serve is ending: its answers may not be out before stdout closes; the audit says
		}
		if !strings.Contains(answer, `"id":7`) {
			t.Fatalf("no answer to the cancelled call: %q", answer)
		}
		return answer
	}
}

// cancelLateHTTP is cancelLateStdio over HTTP: the client's cancel, or serve's shutdown whose
// grace period ends while the call's commit runs.
func cancelLateHTTP(shutdown bool) func(t *testing.T, f *fakeExec, al *audit.Log) string {
	return func(t *testing.T, f *fakeExec, al *audit.Log) string {
		addrc := make(chan string, 1)
		ctx, stop := context.WithCancel(context.Background())
		defer stop()
		done := make(chan error, 1)
		h := HTTPOptions{Addr: "127.0.0.1:0", Grace: 200 * time.Millisecond, Listening: func(a net.Addr) { addrc <- a.String() }}
		go func() { done <- Run(ctx, testPolicy(time.Minute, 2), f, Options{Audit: al, HTTP: &h}) }()
		url := "http://" + <-addrc + HTTPPath
		cs := httpClient(t, url, "")
		defer cs.Close()
		cctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go cs.CallTool(cctx, &mcp.CallToolParams{Name: "fake", Arguments: map[string]any{"late": 3}})
		for f.running.Load() == 0 {
			time.Sleep(5 * time.Millisecond)
		}
		if !shutdown {
			cancel()
			for f.running.Load() != 0 {
				time.Sleep(5 * time.Millisecond)
			}
			time.Sleep(100 * time.Millisecond) // the outcome's audit line, written as the handler returns
		}
		stop()
		<-done
		return ""
	}
}
