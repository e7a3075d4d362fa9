package serve

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// BenchmarkCallThroughServe is serve's own part of a tools/call over stdio: the line read and
// decoded, the SDK's dispatch, the handler, both audit entries and the answer written, with an
// executor that does nothing (fakeExec's echo). Its B/op is what decides how often serve
// collects garbage while calls come (docs/perf-allowlist.md, thirteenth round).
func BenchmarkCallThroughServe(b *testing.B) {
	al, err := audit.Open(filepath.Join(b.TempDir(), "a.jsonl"), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer al.Close()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go Run(ctx, testPolicy(time.Minute, 2), &fakeExec{}, Options{Audit: al, Transport: &LineTransport{In: inR, Out: outW, Max: 1 << 20}})
	lines := bufio.NewReader(outR)
	send := func(s string) { io.WriteString(inW, s+"\n") }
	send(initBody)
	lines.ReadString('\n')
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"fake","arguments":{"echo":"hello world"}}}`, i+10))
		if _, err := lines.ReadString('\n'); err != nil {
			b.Fatal(err)
		}
	}
}
