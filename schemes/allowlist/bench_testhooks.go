//go:build testhooks

package allowlist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/scheme"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRows: the allowlist's calls over stdio beside bare fork+exec of the same command, serve's
// start to its first answer, and (not with -only) the unsandboxed peer and the same call over
// streamable HTTP; the idle serve's memory is measured after every other row of the run.
func benchRows(ctx context.Context, b *scheme.BenchRun) error {
	ws, pol, err := benchPolicy(b.Dir)
	if err != nil {
		return err
	}
	bare, err := bareRuns(b.N, ws)
	if err != nil {
		return err
	}
	b.Row("baseline: bare fork+exec wc", bare)
	cs, srv, starts, err := serveStarts(ctx, b.Bin, pol)
	if err != nil {
		return err
	}
	b.AtEnd(func() {
		time.Sleep(500 * time.Millisecond)
		idleRSS(srv.Process.Pid, b.Note)
		cs.Close()
	})
	b2b, spaced, err := allowlistCalls(ctx, cs, b.N)
	if err != nil {
		return err
	}
	b.Row("run_allowed_command wc, MCP stdio, back-to-back", b2b)
	b.Row("run_allowed_command wc, MCP stdio, 30ms apart", spaced)
	b.Row("serve start -> initialize + tools/list answered", starts)
	if b.Only {
		return nil
	}
	if err := peer(ctx, b.N, b.Dir, ws, b.Row); err != nil {
		b.Skip("peer mcp-server-commands", err)
	}
	if err := httpRows(ctx, b, pol); err != nil {
		b.Skip("allowlist over HTTP", err)
	}
	return nil
}

// benchPolicy writes the built-in policy for a workspace in dir holding one small file; it
// returns the workspace and the policy file.
func benchPolicy(dir string) (ws, pol string, err error) {
	ws = filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o777)
	os.WriteFile(filepath.Join(ws, "f"), []byte("a b c\n"), 0o644)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	p, err := Default(ws)
	if err != nil {
		return "", "", err
	}
	p.Audit.Path = filepath.Join(dir, "audit.jsonl")
	text, _ := policy.Marshal(p)
	pol = filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, text, 0o644)
	return ws, pol, nil
}

// bareRuns times n plain fork+execs of wc in ws: the baseline.
func bareRuns(n int, ws string) ([]time.Duration, error) {
	var bare []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		c := exec.Command("/usr/bin/wc", "f")
		c.Dir = ws
		if err := c.Run(); err != nil {
			return nil, err
		}
		bare = append(bare, time.Since(t0))
	}
	return bare, nil
}

// serveStarts times ten serve starts to the first response (initialize + tools/list); the last
// session stays open, with its server process.
func serveStarts(ctx context.Context, bin, pol string) (*mcp.ClientSession, *exec.Cmd, []time.Duration, error) {
	var starts []time.Duration
	var cs *mcp.ClientSession
	var srv *exec.Cmd
	for i := 0; i < 10; i++ {
		if cs != nil {
			cs.Close()
		}
		srv = exec.Command(bin, "serve", "--policy", pol, "--log-level", "error")
		t0 := time.Now()
		var err error
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
		if err != nil {
			return nil, nil, nil, err
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return nil, nil, nil, err
		}
		starts = append(starts, time.Since(t0))
	}
	return cs, srv, starts, nil
}

// allowlistCalls times n calls of wc back-to-back, then n calls 30ms apart.
func allowlistCalls(ctx context.Context, cs *mcp.ClientSession, n int) (b2b, spaced []time.Duration, err error) {
	call := func() (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"f"}}})
		if err == nil && res.IsError {
			err = fmt.Errorf("call refused: %v", res.Content)
		}
		return time.Since(t0), err
	}
	for i := 0; i < n; i++ {
		d, err := call()
		if err != nil {
			return nil, nil, err
		}
		b2b = append(b2b, d)
	}
	for i := 0; i < n; i++ {
		time.Sleep(30 * time.Millisecond) // a client's think time: the warm helper is ready
		d, err := call()
		if err != nil {
			return nil, nil, err
		}
		spaced = append(spaced, d)
	}
	return b2b, spaced, nil
}

// idleRSS prints the idle serve's resident memory and notes it for the Markdown table.
func idleRSS(pid int, note func(string)) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmRSS") {
			rss := strings.Join(strings.Fields(l), " ")
			fmt.Println("serve idle", rss)
			note("allowlist serve idle " + rss + " (a root serve keeps no helper process; one that is not root keeps one warm exec helper); target ≤ 20 MB")
		}
	}
}

// peerVersion is the unsandboxed peer measured side by side: mcp-server-commands (npm, Node,
// no isolation at all), its run_command tool running the same `wc f` through a shell.
const peerVersion = "mcp-server-commands@0.5.0"

// peer installs the peer into a temporary prefix with npm and measures it in the same run; it
// returns why it cannot when npm or node is missing or the install fails (no registry).
func peer(ctx context.Context, n int, dir, ws string, row func(string, []time.Duration)) error {
	npm, err := exec.LookPath("npm")
	if err != nil {
		return fmt.Errorf("npm not found: install Node.js to compare")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("node not found")
	}
	prefix := filepath.Join(dir, "peer")
	ictx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	inst := exec.CommandContext(ictx, npm, "install", "--prefix", prefix, "--no-audit", "--no-fund", "--silent", peerVersion)
	if out, err := inst.CombinedOutput(); err != nil {
		return fmt.Errorf("npm install %s: %v %s", peerVersion, err, strings.TrimSpace(string(out)))
	}
	entry := filepath.Join(prefix, "node_modules", "mcp-server-commands", "build", "index.js")
	var starts []time.Duration
	var cs *mcp.ClientSession
	for i := 0; i < 10; i++ {
		if cs != nil {
			cs.Close()
		}
		t0 := time.Now()
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: exec.Command(node, entry)}, nil)
		if err != nil {
			return fmt.Errorf("start the peer: %w", err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return err
		}
		starts = append(starts, time.Since(t0))
	}
	defer cs.Close()
	var calls []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "wc f", "workdir": ws}})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("peer call failed: %v", res.Content)
		}
		calls = append(calls, time.Since(t0))
	}
	row("peer "+peerVersion+" run_command wc (no isolation), back-to-back", calls)
	row("peer start -> initialize + tools/list answered", starts)
	return nil
}

// httpRows: the same allowlist call over streamable HTTP.
func httpRows(ctx context.Context, b *scheme.BenchRun, pol string) error {
	n, bin, row := b.N, b.Bin, b.Row
	cmd, url, err := startServe(ctx, bin, nil, "--policy", pol, "--http", "127.0.0.1:0", "--log-level", "info")
	if cmd != nil {
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
	}
	if err != nil {
		return err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: http.DefaultClient}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	d, err := b.TimeCalls(ctx, n, cs, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"f"}}})
	if err != nil {
		return err
	}
	row("run_allowed_command wc, MCP streamable HTTP, back-to-back", d)
	return nil
}

var urlLine = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startServe starts serve with extra args and env; for --http it returns the URL it printed.
func startServe(ctx context.Context, bin string, env []string, args ...string) (*exec.Cmd, string, error) {
	cmd := exec.CommandContext(ctx, bin, append([]string{"serve"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	urlc := make(chan string, 1)
	go func() {
		buf := make([]byte, 64<<10)
		var seen strings.Builder
		for {
			k, err := stderr.Read(buf)
			seen.Write(buf[:k])
			if m := urlLine.FindStringSubmatch(seen.String()); m != nil {
				urlc <- m[1]
				io.Copy(io.Discard, stderr)
				return
			}
			if err != nil {
				close(urlc)
				return
			}
		}
	}()
	select {
	case u, ok := <-urlc:
		if !ok {
			return cmd, "", errors.New("serve --http exited before it listened")
		}
		return cmd, u, nil
	case <-time.After(20 * time.Second):
		return cmd, "", errors.New("serve --http printed no URL within 20s")
	}
}
