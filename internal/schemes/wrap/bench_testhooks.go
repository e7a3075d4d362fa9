//go:build testhooks

package wrap

// The wrap rows: the same tiny Go MCP server (e2e/testdata/wrapserver) and the same client,
// unwrapped and through `mcpsandbox wrap`, in one run, interleaved: per-call relay overhead and
// start-up overhead (start -> initialize + tools/list answered). With npx and a cached
// @modelcontextprotocol/server-everything, the same for it.

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wrapPolicy is the bench's wrap policy: no network, the test server's tools all allowed.
const wrapPolicy = `version = 1
scheme = "wrap"
name = "bench"
[limits]
memory = "4GiB"
pids = 256
[audit]
path = %q
[wrap]
network = false
`

// benchRows are the wrap scheme's rows in the project's bench; the npx server's only with -only wrap.
func benchRows(ctx context.Context, b *scheme.BenchRun) error {
	n, bin, dir, row := b.N, b.Bin, b.Dir, b.Row
	server := filepath.Join(dir, "wrapserver")
	build := exec.Command("go", "build", "-o", server, "./e2e/testdata/wrapserver")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build the test server: %v\n%s", err, out)
	}
	pol := filepath.Join(dir, "wrap.toml")
	if err := os.WriteFile(pol, fmt.Appendf(nil, wrapPolicy, filepath.Join(dir, "wrap-audit.jsonl")), 0o600); err != nil {
		return err
	}
	plain := func() *exec.Cmd { return exec.Command(server) }
	wrapped := func() *exec.Cmd { return exec.Command(bin, "wrap", "--policy", pol, "--", server) }
	var su, sw []time.Duration
	for range 15 { // interleaved, so both see the same machine
		for _, c := range []struct {
			mk  func() *exec.Cmd
			out *[]time.Duration
		}{{plain, &su}, {wrapped, &sw}} {
			d, err := startOnce(ctx, c.mk())
			if err != nil {
				return err
			}
			*c.out = append(*c.out, d)
		}
	}
	row("wrapserver start -> initialize + tools/list, unwrapped"+scheme.GoClient("stdio"), su)
	row("wrapserver start -> initialize + tools/list, through wrap"+scheme.GoClient("stdio"), sw)
	cu, cw, err := interleavedCalls(ctx, n, plain(), wrapped(), "echo", map[string]any{"text": "hello"})
	if err != nil {
		return err
	}
	row("wrapserver tools/call echo, unwrapped"+scheme.GoClient("stdio"), cu)
	row("wrapserver tools/call echo, through wrap"+scheme.GoClient("stdio"), cw)
	overhead("wrapserver", su, sw, cu, cw)
	if !b.Only { // npx's starts take seconds each on a loaded 2-CPU host: -only wrap has them
		return nil
	}
	if err := npxRows(ctx, min(n, 100), bin, dir, row); err != nil {
		fmt.Printf("(npx rows skipped: %v)\n", err)
	}
	return nil
}

// npxRows: @modelcontextprotocol/server-everything started by npx, from the client's npm cache,
// unwrapped and through wrap (network = false; its private cache seeded on a first, untimed start).
func npxRows(ctx context.Context, n int, bin, dir string, row func(string, []time.Duration)) error {
	npx, err := exec.LookPath("npx")
	if err != nil {
		return err
	}
	const spec = "@modelcontextprotocol/server-everything@2026.8.31"
	pol := filepath.Join(dir, "wrap-npx.toml")
	body := strings.Replace(fmt.Sprintf(wrapPolicy, filepath.Join(dir, "wrap-audit.jsonl")), `name = "bench"`, `name = "bench-everything"`, 1)
	if err := os.WriteFile(pol, []byte(body), 0o600); err != nil {
		return err
	}
	plain := func() *exec.Cmd { return exec.Command(npx, "-y", spec) }
	wrapped := func() *exec.Cmd { return exec.Command(bin, "wrap", "--policy", pol, "--", "npx", "-y", spec) }
	for _, mk := range []func() *exec.Cmd{plain, wrapped} { // untimed: fills the caches
		if _, err := startOnce(ctx, mk()); err != nil {
			return err
		}
	}
	var su, sw []time.Duration
	for range 5 {
		for _, c := range []struct {
			mk  func() *exec.Cmd
			out *[]time.Duration
		}{{plain, &su}, {wrapped, &sw}} {
			d, err := startOnce(ctx, c.mk())
			if err != nil {
				return err
			}
			*c.out = append(*c.out, d)
		}
	}
	row("server-everything (npx) start -> initialize + tools/list, unwrapped"+scheme.GoClient("stdio"), su)
	row("server-everything (npx) start -> initialize + tools/list, through wrap"+scheme.GoClient("stdio"), sw)
	cu, cw, err := interleavedCalls(ctx, n, plain(), wrapped(), "echo", map[string]any{"message": "hello"})
	if err != nil {
		return err
	}
	row("server-everything tools/call echo, unwrapped"+scheme.GoClient("stdio"), cu)
	row("server-everything tools/call echo, through wrap"+scheme.GoClient("stdio"), cw)
	overhead("server-everything", su, sw, cu, cw)
	return nil
}

// startOnce times one start: process start to initialize and tools/list answered.
func startOnce(ctx context.Context, cmd *exec.Cmd) (time.Duration, error) {
	t0 := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return 0, fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// interleavedCalls times n calls on each of two servers, alternating, after a warm-up.
func interleavedCalls(ctx context.Context, n int, a, b *exec.Cmd, tool string, args map[string]any) (da, db []time.Duration, err error) {
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for _, c := range []*exec.Cmd{a, b} {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			return nil, nil, fmt.Errorf("start %v: %w", c.Args, err)
		}
		sessions = append(sessions, cs)
	}
	call := func(cs *mcp.ClientSession) (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err == nil && res.IsError {
			err = fmt.Errorf("%s refused: %v", tool, res.Content)
		}
		return time.Since(t0), err
	}
	for i := -20; i < n; i++ { // 20 warm-up calls each
		for j, cs := range sessions {
			d, err := call(cs)
			if err != nil {
				return nil, nil, err
			}
			if i >= 0 && j == 0 {
				da = append(da, d)
			} else if i >= 0 {
				db = append(db, d)
			}
		}
	}
	return da, db, nil
}

// overhead prints wrap's overhead: the difference of the percentiles, wrapped minus unwrapped.
func overhead(what string, su, sw, cu, cw []time.Duration) {
	q := func(d []time.Duration, f float64) time.Duration {
		s := slices.Clone(d)
		slices.Sort(s)
		return s[int(f*float64(len(s)-1))]
	}
	r := func(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }
	fmt.Printf("%s: wrap's overhead per tools/call p50 %s, p99 %s (target p50 <= 1ms); start-up p50 %s (target <= 50ms)\n",
		what, r(q(cw, 0.5)-q(cu, 0.5)), r(q(cw, 0.99)-q(cu, 0.99)), r(q(sw, 0.5)-q(su, 0.5)))
}
