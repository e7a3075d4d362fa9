package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
)

// BenchmarkExecutorOverhead: the executor's run_command (reuse = session) vs the bare client
// call it makes, against the local E2B server in Echo mode (no process start-up). The
// difference is what the e2b executor itself adds per call; e2e's BenchmarkE2BProxyOverhead
// measures the whole MCP-over-stdio path.
func BenchmarkExecutorOverhead(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("the local E2B server runs on Linux only")
	}
	f, err := e2bfake.New(e2bfake.Options{APIKey: testKey, Echo: true})
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	vars := map[string]string{keyEnv: testKey, "E2B_API_URL": f.URL(), "E2B_SANDBOX_URL": f.URL()}
	b.Run("direct", func(b *testing.B) {
		c := NewClient(Config{APIKey: testKey, APIURL: f.URL(), SandboxURL: f.URL()})
		sb, err := c.Create(context.Background(), CreateOptions{Template: "base", Timeout: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var out, errb bytes.Buffer
			if _, err := c.RunCommand(ctx, sb, "true", &out, &errb); err != nil {
				b.Fatal(err)
			}
			cancel()
		}
	})
	b.Run("executor", func(b *testing.B) {
		ex, err := New(testPolicy("session"), Options{Getenv: func(k string) string { return vars[k] }, NoReap: true})
		if err != nil {
			b.Fatal(err)
		}
		defer ex.Close()
		run := ex.Tools()[1].Run
		raw, _ := json.Marshal(map[string]any{"command": "true"})
		call := executor.Call{Args: raw, Timeout: 30 * time.Second, MaxOutput: 1 << 16, Session: "bench"}
		if _, err := run(context.Background(), call); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			r, err := run(ctx, call)
			cancel()
			if err != nil || r.Stdout != "true" {
				b.Fatal(r, err)
			}
		}
	})
}
