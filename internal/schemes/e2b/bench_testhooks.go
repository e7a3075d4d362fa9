//go:build testhooks

package e2b

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRows: run_command through serve against the local E2B server in its Echo mode (no
// process start-up), beside the same server called directly: what the proxy adds.
func benchRows(ctx context.Context, b *scheme.BenchRun) error {
	n, dir, row := b.N, b.Dir, b.Row
	const key = "e2b_bench0local0server00000000000000000000"
	fake, err := e2bfake.New(e2bfake.Options{APIKey: key, Echo: true})
	if err != nil {
		return err
	}
	defer fake.Close()
	// Direct: one request to the control plane's sandbox list, as the cheapest round trip.
	var direct []time.Duration
	for i := 0; i < n; i++ {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fake.URL()+"/sandboxes", nil)
		req.Header.Set("X-API-Key", key)
		t0 := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		direct = append(direct, time.Since(t0))
	}
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "session"
	e2bsec.Of(p).APIURL = fake.URL()
	p.Audit.Path = filepath.Join(dir, "e2b-audit.jsonl")
	text, _ := policy.Marshal(p)
	pol := filepath.Join(dir, "e2b.toml")
	if err := os.WriteFile(pol, text, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(b.Bin, "serve", "--policy", pol, "--log-level", "error")
	cmd.Env = append(os.Environ(), e2bsec.Of(p).APIKeyEnv+"="+key, "E2B_API_URL="+fake.URL(), "E2B_SANDBOX_URL="+fake.URL(), "E2B_DOMAIN="+fake.Domain())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo 1"}}
	if _, err := b.TimeCalls(ctx, 1, cs, call); err != nil { // the session's sandbox
		return err
	}
	via, err := b.TimeCalls(ctx, n, cs, call)
	if err != nil {
		return err
	}
	row("baseline: the local E2B server, one direct request; client: Go net/http, no serve", direct)
	row("e2b run_command through serve (MCP stdio, session sandbox, Echo server)"+scheme.GoClient("stdio"), via)
	return nil
}
