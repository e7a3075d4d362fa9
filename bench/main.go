// Command bench prints latency percentiles of the allowlist scheme against a raw fork+exec
// baseline measured in the same run, plus serve's start-up time and idle memory.
//
//	go run ./bench [-n 200]
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
	os.Chmod(dir, 0o755)
	bin := filepath.Join(dir, "mcpsandbox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/mcpsandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("build: %v\n%s", err, out)
	}
	ws := filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o777)
	os.WriteFile(filepath.Join(ws, "f"), []byte("a b c\n"), 0o644)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	p, err := generate.DefaultAllowlist(ws)
	if err != nil {
		return err
	}
	p.Audit.Path = filepath.Join(dir, "audit.jsonl")
	b, _ := policy.Marshal(p)
	pol := filepath.Join(dir, "policy.toml")
	os.WriteFile(pol, b, 0o644)

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "what\tn\tp50\tp90\tp99\t")
	row := func(what string, d []time.Duration) {
		slices.Sort(d)
		q := func(f float64) string { return d[int(f*float64(len(d)-1))].Round(10 * time.Microsecond).String() }
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t\n", what, len(d), q(0.5), q(0.9), q(0.99))
	}

	var bare []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		c := exec.Command("/usr/bin/wc", "f")
		c.Dir = ws
		if err := c.Run(); err != nil {
			return err
		}
		bare = append(bare, time.Since(t0))
	}
	row("baseline: bare fork+exec wc", bare)

	ctx := context.Background()
	var starts []time.Duration
	var cs *mcp.ClientSession
	var srv *exec.Cmd
	for i := 0; i < 10; i++ { // serve start to first response (initialize + tools/list)
		if cs != nil {
			cs.Close()
		}
		srv = exec.Command(bin, "serve", "--policy", pol, "--log-level", "error")
		t0 := time.Now()
		cs, err = mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
		if err != nil {
			return err
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			return err
		}
		starts = append(starts, time.Since(t0))
	}
	defer cs.Close()
	call := func() (time.Duration, error) {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"f"}}})
		if err == nil && res.IsError {
			err = fmt.Errorf("call refused: %v", res.Content)
		}
		return time.Since(t0), err
	}
	var b2b, spaced []time.Duration
	for i := 0; i < n; i++ {
		d, err := call()
		if err != nil {
			return err
		}
		b2b = append(b2b, d)
	}
	for i := 0; i < n; i++ {
		time.Sleep(30 * time.Millisecond) // a client's think time: the warm helper is ready
		d, err := call()
		if err != nil {
			return err
		}
		spaced = append(spaced, d)
	}
	row("run_allowed_command wc, MCP stdio, back-to-back", b2b)
	row("run_allowed_command wc, MCP stdio, 30ms apart", spaced)
	row("serve start -> initialize + tools/list answered", starts)
	tw.Flush()
	time.Sleep(500 * time.Millisecond)
	if st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", srv.Process.Pid)); err == nil {
		for _, l := range strings.Split(string(st), "\n") {
			if strings.HasPrefix(l, "VmRSS") {
				fmt.Println("serve idle", strings.Join(strings.Fields(l), " "), "(plus one warm helper process)")
			}
		}
	}
	return nil
}
