package sandbox

import (
	"strings"
	"testing"

	wrapsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// FuzzRelay: whatever a hostile client and a hostile server send (both are peers wrap does not
// trust), the relay never panics, and every frame it writes to either peer is one line.
func FuzzRelay(f *testing.F) {
	for _, s := range []struct{ client, server string }{
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{}}}`, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`},
		{`{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"capabilities":{"sampling":{}}}}`, `{"jsonrpc":"2.0","id":"a","result":{"capabilities":{"tools":{}}}}`},
		{`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, `{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"x\u001b[8m","description":"\u009b"}]}}`},
		{`[{"jsonrpc":"2.0"}]`, `{"jsonrpc":"2.0","id":9,"method":"sampling/createMessage","params":{}}`},
		{`{"id":1,"id":2,"method":"tools/call"}`, `{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"\ud800"}}`},
	} {
		f.Add(s.client, s.server)
	}
	f.Fuzz(func(t *testing.T, client, server string) {
		r, toClient, toServer := testRelay(wrapsec.Of(policy.Default(wrapsec.Name)).Tools)
		_ = r.fromClient(strings.NewReader(client + "\n"))
		_ = r.fromServer(strings.NewReader(server + "\n"))
		r.mu.Lock() // a call left waiting keeps its timer: hundreds of thousands of them stall the fuzzer
		for _, p := range r.inflight {
			if p.timer != nil {
				p.timer.Stop()
			}
		}
		r.mu.Unlock()
		for who, b := range map[string]*syncBuf{"client": toClient, "server": toServer} {
			b.mu.Lock()
			out := b.b.String()
			b.mu.Unlock()
			if out == "" {
				continue
			}
			if !strings.HasSuffix(out, "\n") {
				t.Fatalf("to the %s: a frame without its newline: %q", who, out)
			}
		}
	})
}
