// Command bench prints latency percentiles of every scheme beside the baselines measured in the
// same run (bare fork+exec, the unsandboxed peer mcp-server-commands, `docker run --rm` with the
// same flags, the local E2B server called directly), plus serve's start-up time and idle memory,
// over stdio and HTTP. With -o it also writes the table, dated and with the machine, as Markdown.
//
//	go run ./bench [-n 200] [-o docs/benchmarks.md] [-only docker]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	n := flag.Int("n", 200, "calls per row")
	flag.StringVar(&mdOut, "o", "", "also write the table as Markdown to this file (e.g. docs/benchmarks.md)")
	flag.StringVar(&only, "only", "", `run only this part's rows: "allowlist" (its calls over stdio, with the bare baseline), "docker" (its cold and pooled calls per runtime, the Engine API and CLI baselines), "workspace" (the transactional workspace's commit), "srt" (the hostile server unwrapped, under sandbox-runtime and under wrap: docs/wrap-vs-srt.md)`)
	flag.Parse()
	if err := run(*n); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(n int) error {
	dir, err := os.MkdirTemp("", "mcpsandbox-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, ws, pol, err := benchFiles(dir)
	if err != nil {
		return err
	}

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "what\tn\tp50\tp90\tp99\t")
	row := func(what string, d []time.Duration) {
		slices.Sort(d)
		q := func(f float64) string { return d[int(f*float64(len(d)-1))].Round(10 * time.Microsecond).String() }
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", what, len(d), q(0.5), q(0.9), q(0.99))
		record(what, d)
	}
	defer func() { tw.Flush(); writeMarkdown() }()
	switch only {
	case "", "allowlist":
	case "docker":
		if err := dockerRows(context.Background(), min(n, 40), bin, dir, row); err != nil {
			skipped(tw, "docker scheme", err)
		}
		return nil
	case "workspace":
		if err := workspaceRows(n, dir, row); err != nil {
			skipped(tw, "transactional workspace", err)
		}
		return nil
	case "srt":
		if err := srtRows(context.Background(), n, bin, dir, tw, row); err != nil {
			skipped(tw, "hostile server unwrapped, under srt and under wrap", err)
		}
		return nil
	default:
		return fmt.Errorf("-only %q: the parts that can run alone are: allowlist, docker, workspace, srt", only)
	}

	bare, err := bareRuns(n, ws)
	if err != nil {
		return err
	}
	row("baseline: bare fork+exec wc", bare)

	ctx := context.Background()
	cs, srv, starts, err := serveStarts(ctx, bin, pol)
	if err != nil {
		return err
	}
	defer cs.Close()
	b2b, spaced, err := allowlistCalls(ctx, cs, n)
	if err != nil {
		return err
	}
	row("run_allowed_command wc, MCP stdio, back-to-back", b2b)
	row("run_allowed_command wc, MCP stdio, 30ms apart", spaced)
	row("serve start -> initialize + tools/list answered", starts)
	if only == "allowlist" {
		return nil
	}
	if err := peer(ctx, n, dir, ws, row); err != nil {
		skipped(tw, "peer mcp-server-commands", err)
	}
	if err := httpRows(ctx, n, bin, pol, row); err != nil {
		skipped(tw, "allowlist over HTTP", err)
	}
	if err := dockerRows(ctx, min(n, 40), bin, dir, row); err != nil {
		skipped(tw, "docker scheme", err)
	}
	if err := egressRows(n, row); err != nil {
		skipped(tw, "egress proxy", err)
	}
	if err := e2bRows(ctx, n, bin, dir, row); err != nil {
		skipped(tw, "e2b scheme", err)
	}
	if err := workspaceRows(n, dir, row); err != nil {
		skipped(tw, "transactional workspace", err)
	}
	tw.Flush()
	time.Sleep(500 * time.Millisecond)
	idleRSS(srv.Process.Pid)
	return nil
}

// benchFiles builds the binary into dir and writes the default allowlist policy for a workspace
// there holding one small file; it returns the binary, the workspace and the policy.
func benchFiles(dir string) (bin, ws, pol string, err error) {
	os.Chmod(dir, 0o755)
	bin = filepath.Join(dir, "mcpsandbox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcpsandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", "", "", fmt.Errorf("build: %v\n%s", err, out)
	}
	ws = filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o777)
	os.WriteFile(filepath.Join(ws, "f"), []byte("a b c\n"), 0o644)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	p, err := generate.DefaultAllowlist(ws)
	if err != nil {
		return "", "", "", err
	}
	p.Audit.Path = filepath.Join(dir, "audit.jsonl")
	b, _ := policy.Marshal(p)
	pol = filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, b, 0o644)
	return bin, ws, pol, nil
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
func idleRSS(pid int) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	for _, l := range strings.Split(string(st), "\n") {
		if strings.HasPrefix(l, "VmRSS") {
			rss := strings.Join(strings.Fields(l), " ")
			fmt.Println("serve idle", rss)
			notes = append(notes, "allowlist serve idle "+rss+" (a root serve keeps no helper process; one that is not root keeps one warm exec helper); target ≤ 20 MB")
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
