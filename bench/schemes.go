package main

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
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var (
	mdOut string
	only  string // -only: run one part's rows
	rows  []mdRow
	notes []string
)

type mdRow struct {
	what          string
	n             int
	p50, p90, p99 time.Duration
}

func record(what string, d []time.Duration) {
	q := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))] }
	rows = append(rows, mdRow{what, len(d), q(0.5), q(0.9), q(0.99)})
}

func skipped(tw *tabwriter.Writer, what string, err error) {
	fmt.Fprintf(tw, "%s: skipped (%v)\t\t\t\t\t\n", what, err)
	notes = append(notes, fmt.Sprintf("%s: skipped (%v)", what, err))
}

func p50(prefix string) (time.Duration, bool) {
	for _, r := range rows {
		if strings.HasPrefix(r.what, prefix) {
			return r.p50, true
		}
	}
	return 0, false
}

// targets are DESIGN.md's, judged on this run's figures: each says met or not.
func targets() []string {
	var out []string
	judge := func(what string, ok bool, detail string) {
		mark := "met"
		if !ok {
			mark = "NOT met"
		}
		out = append(out, fmt.Sprintf("%s: %s (%s)", what, mark, detail))
	}
	bare, _ := p50("baseline: bare fork+exec")
	if call, ok := p50("run_allowed_command wc, MCP stdio, 30ms"); ok {
		judge("allowlist call p50 ≤ 2.5× bare fork+exec", call <= bare*5/2, fmt.Sprintf("%s vs %s", round(call), round(bare)))
		if peer, ok := p50("peer "); ok {
			judge("allowlist call p50 ≤ the unsandboxed peer's", call <= peer, fmt.Sprintf("%s vs %s", round(call), round(peer)))
		}
		for _, r := range rows {
			if strings.HasPrefix(r.what, "run_allowed_command wc") {
				judge("allowlist call p99 ≤ 2× p50 ("+r.what+")", r.p99 <= 2*r.p50, fmt.Sprintf("p99 %s, p50 %s", round(r.p99), round(r.p50)))
			}
		}
	}
	if st, ok := p50("serve start"); ok {
		judge("serve start to first response ≤ 20 ms", st <= 20*time.Millisecond, round(st).String())
	}
	if d, ok := p50("docker run_python_sandbox, pooled"); ok {
		judge("docker pooled call p50 ≤ 15 ms", d <= 15*time.Millisecond, round(d).String())
	}
	if d, ok := p50("docker run_python_sandbox, cold"); ok {
		judge("docker cold call p50 ≤ 0.3 s", d <= 300*time.Millisecond, round(d).String()+", the engine's default runtime")
	}
	if d, ok := p50("runtime crun: docker run_python_sandbox, pooled"); ok {
		judge("docker pooled call p50 ≤ 15 ms, runtime = \"crun\"", d <= 15*time.Millisecond, round(d).String())
	}
	if d, ok := p50("runtime crun: docker run_python_sandbox, cold"); ok {
		judge("docker cold call p50 ≤ 0.3 s, runtime = \"crun\"", d <= 300*time.Millisecond, round(d).String())
	}
	if d, ok := p50("docker run_python_sandbox, cold"); ok {
		if raw, ok := p50("baseline: Engine API"); ok {
			// No target in DESIGN.md: what serve adds to the engine's own create+start.
			out = append(out, fmt.Sprintf("a cold docker call through serve takes %s over the Engine API's own create+attach+start to output (%s vs %s; no target set)", round(d-raw), round(d), round(raw)))
		}
	}
	if via, ok := p50("e2b run_command through serve"); ok {
		if direct, ok := p50("baseline: the local E2B server"); ok {
			judge("e2b proxy adds ≤ 2 ms", via-direct <= 2*time.Millisecond, fmt.Sprintf("%s through serve vs %s direct", round(via), round(direct)))
		}
	}
	if via, ok := p50("network by name: the same fetch"); ok {
		if direct, ok := p50("baseline: small HTTPS fetch"); ok {
			// No target in DESIGN.md: the row says what the proxy adds, for the record.
			out = append(out, fmt.Sprintf("egress proxy adds %s to a small HTTPS fetch (%s through the proxy vs %s direct; no target set)", round(via-direct), round(via), round(direct)))
		}
	}
	return out
}

func round(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }

func writeMarkdown() {
	if mdOut == "" {
		return
	}
	var b strings.Builder
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	cmd := "go run ./bench -o " + mdOut
	if only != "" {
		cmd = "go run ./bench -only " + only + " -o " + mdOut
	}
	fmt.Fprintf(&b, "# Benchmarks\n\nWritten by `%s` on %s: %s, %d CPUs, %s/%s, kernel %s, load average at the end %s, uid %d. Every row is measured in the same run as its baseline.\n\n",
		cmd, time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		strings.TrimSpace(string(kernel)), strings.Join(strings.Fields(string(load))[:3], " "), os.Geteuid())
	b.WriteString("| what | n | p50 | p90 | p99 |\n|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %d | %s | %s | %s |\n", r.what, r.n, round(r.p50), round(r.p90), round(r.p99))
	}
	b.WriteString("\n## Targets (DESIGN.md), judged on this run\n\n")
	for _, t := range targets() {
		fmt.Fprintf(&b, "- %s\n", t)
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	if err := os.MkdirAll(filepath.Dir(mdOut), 0o755); err == nil {
		err = os.WriteFile(mdOut, []byte(b.String()), 0o644)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: write", mdOut+":", err)
		}
	}
	for _, t := range targets() {
		fmt.Println(t)
	}
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

func timeCalls(ctx context.Context, n int, cs *mcp.ClientSession, p *mcp.CallToolParams) ([]time.Duration, error) {
	var d []time.Duration
	for i := 0; i < n; i++ {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			return nil, err
		}
		if res.IsError {
			return nil, fmt.Errorf("%s refused: %v", p.Name, res.Content)
		}
		d = append(d, time.Since(t0))
	}
	return d, nil
}

// httpRows: the same allowlist call over streamable HTTP.
func httpRows(ctx context.Context, n int, bin, pol string, row func(string, []time.Duration)) error {
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
	d, err := timeCalls(ctx, n, cs, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"f"}}})
	if err != nil {
		return err
	}
	row("run_allowed_command wc, MCP streamable HTTP, back-to-back", d)
	return nil
}

// e2bRows: run_command through serve against the local E2B server in its Echo mode (no process
// start-up), beside the same server called directly: what the proxy adds.
func e2bRows(ctx context.Context, n int, bin, dir string, row func(string, []time.Duration)) error {
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
	p := policy.Default(policy.SchemeE2B)
	p.E2B.Reuse = "session"
	p.E2B.APIURL = fake.URL()
	p.Audit.Path = filepath.Join(dir, "e2b-audit.jsonl")
	b, _ := policy.Marshal(p)
	pol := filepath.Join(dir, "e2b.toml")
	if err := os.WriteFile(pol, b, 0o600); err != nil {
		return err
	}
	cmd := exec.Command(bin, "serve", "--policy", pol, "--log-level", "error")
	cmd.Env = append(os.Environ(), p.E2B.APIKeyEnv+"="+key, "E2B_API_URL="+fake.URL(), "E2B_SANDBOX_URL="+fake.URL(), "E2B_DOMAIN="+fake.Domain())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo 1"}}
	if _, err := timeCalls(ctx, 1, cs, call); err != nil { // the session's sandbox
		return err
	}
	via, err := timeCalls(ctx, n, cs, call)
	if err != nil {
		return err
	}
	row("baseline: the local E2B server, one direct request", direct)
	row("e2b run_command through serve (MCP stdio, session sandbox, Echo server)", via)
	return nil
}
