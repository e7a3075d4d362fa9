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

	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchRows: the allowlist's call beside its two baselines, measured in the same run and
// interleaved call by call so that all three see the same machine: bare fork+exec of the same
// command, and the unsandboxed peer mcp-server-commands driven exactly as ours (the same Go MCP
// client, the same `wc in.txt`, both warm). Then serve's start (spawn to tools/list answered)
// interleaved with the peer's, a cross-check of both calls by an independent client (the official
// TypeScript SDK, from the peer's install), and (not with -only) the call over streamable HTTP.
// The idle serve's memory is measured after every other row of the run.
func benchRows(ctx context.Context, b *scheme.BenchRun) error {
	ws, pol, err := benchPolicy(b.Dir)
	if err != nil {
		return err
	}
	ours := func() *exec.Cmd {
		c := exec.Command(b.Bin, "serve", "--policy", pol, "--log-level", "error")
		c.Env = clientEnv()
		return c
	}
	pr, err := installPeer(ctx, b.Dir, ws)
	if err != nil {
		b.Skip("peer "+peerVersion, err)
	}
	cs, srv, err := connect(ctx, ours())
	if err != nil {
		return err
	}
	b.AtEnd(func() {
		// idle: 2 s without a call (serve hands the memory it no longer uses back to the
		// system after 1 s without one: internal/serve's IdleRelease)
		time.Sleep(2 * time.Second)
		idleRSS(srv.Process.Pid, b.Note)
		cs.Close()
	})
	switch b.Part {
	case "", "calls", "start":
	default:
		return fmt.Errorf("-only allowlist:%s: the allowlist parts are calls (bare, ours and the peer's, and the cross-check) and start", b.Part)
	}
	if b.Part != "start" {
		if err := callRows(ctx, b, ws, cs, pr); err != nil {
			return err
		}
	}
	if b.Part != "calls" {
		if err := startRows(ctx, b, ours, pr); err != nil {
			return err
		}
	}
	if pr != nil && b.Part != "start" {
		if err := crossCheck(ctx, b, pr, pol); err != nil {
			b.Skip("cross-check by the TypeScript SDK client", err)
		}
	}
	if b.Only {
		return nil
	}
	if err := httpRows(ctx, b, pol); err != nil {
		b.Skip("allowlist over HTTP", err)
	}
	return nil
}

// benchFile is the file both servers' `wc` counts, in the workspace.
const benchFile = "in.txt"

// Clients, as each row states its own.
const (
	bareClient = "; client: none (os/exec fork+exec)"
)

var goClient = scheme.GoClient("stdio")

// benchPolicy writes the built-in policy for a workspace in dir holding one small file; it
// returns the workspace and the policy file.
func benchPolicy(dir string) (ws, pol string, err error) {
	ws = filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o777)
	os.WriteFile(filepath.Join(ws, benchFile), []byte("a b c\n"), 0o644)
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

// unprivUID is the uid the bench starts a serve that is not root as.
const unprivUID = 65534

// unprivServe is serve, started as uid 65534 with a HOME and an audit log of its own, on the
// built-in policy for ws (which belongs to that uid): a serve that is not root, as a client a
// user runs starts it.
func unprivServe(bin, dir, ws string) (*exec.Cmd, error) {
	home := filepath.Join(dir, "unpriv")
	if err := os.Mkdir(home, 0o755); err != nil {
		return nil, err
	}
	if err := os.Chown(home, unprivUID, unprivUID); err != nil {
		return nil, err
	}
	p, err := Default(ws)
	if err != nil {
		return nil, err
	}
	p.Audit.Path = filepath.Join(home, "audit.jsonl")
	text, _ := policy.Marshal(p)
	pol := filepath.Join(dir, "policy-unpriv.toml")
	if err := os.WriteFile(pol, text, 0o644); err != nil {
		return nil, err
	}
	c := exec.Command(bin, "serve", "--policy", pol, "--log-level", "error")
	c.Env = append(clientEnv(), "HOME="+home) // the later HOME wins
	if err := runAs(c, unprivUID); err != nil {
		return nil, err
	}
	return c, nil
}

// clientEnv is the environment the TypeScript SDK's stdio client gives a server it starts (its
// DEFAULT_INHERITED_ENV_VARS on POSIX), and so most MCP hosts: the Go rows start both servers
// with it, as the cross-check's client does. This machine's NODE_EXTRA_CA_CERTS, inherited, had
// node parse a CA bundle at every start of the peer.
func clientEnv() []string {
	var env []string
	for _, k := range []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// connect starts cmd as an MCP server over stdio and initializes a session with it.
func connect(ctx context.Context, cmd *exec.Cmd) (*mcp.ClientSession, *exec.Cmd, error) {
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		return nil, nil, fmt.Errorf("start %v: %w", cmd.Args, err)
	}
	return cs, cmd, nil
}

// ourCall and peerCall are the same command with the same argument, in each server's shape.
func ourCall() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{benchFile}}}
}

func peerCall() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "wc " + benchFile}}
}

// timedCall times one call; a refused or failed call is an error.
func timedCall(ctx context.Context, cs *mcp.ClientSession, p *mcp.CallToolParams) (time.Duration, error) {
	t0 := time.Now()
	res, err := cs.CallTool(ctx, p)
	d := time.Since(t0)
	if err == nil && res.IsError {
		err = fmt.Errorf("%s refused: %v", p.Name, res.Content)
	}
	return d, err
}

// bareOnce times one plain fork+exec of wc in ws.
func bareOnce(ws string) (time.Duration, error) {
	t0 := time.Now()
	c := exec.Command("/usr/bin/wc", benchFile)
	c.Dir = ws
	err := c.Run()
	return time.Since(t0), err
}

// warmUp is how many untimed calls each server gets first: the peer's JIT and our first
// call's one-time work are not what a session's calls cost.
const warmUp = 30

// callRows: rounds of bare, ours and the peer's call, the order rotated each round, first
// back-to-back (n rounds), then each call 30 ms after the previous one (a client's think time;
// min(n, 100) rounds). The back-to-back rounds also time an MCP ping to each server: the same
// client, stdio and JSON-RPC with no tool behind it, the floor under any call (a call cannot
// take less than its ping plus its command's bare fork+exec).
func callRows(ctx context.Context, b *scheme.BenchRun, ws string, cs *mcp.ClientSession, pr *peerRun) error {
	var peerCS *mcp.ClientSession
	if pr != nil {
		c, _, err := connect(ctx, pr.cmd())
		if err != nil {
			return err
		}
		defer c.Close()
		peerCS = c
	}
	type timed struct {
		what   string
		spaced bool // also timed in the spaced rounds
		f      func() (time.Duration, error)
	}
	fns := []timed{
		{"baseline: bare fork+exec wc " + benchFile + bareClient, false, func() (time.Duration, error) { return bareOnce(ws) }},
		{"run_allowed_command wc " + benchFile + ", MCP stdio, warm, %s" + goClient, true, func() (time.Duration, error) { return timedCall(ctx, cs, ourCall()) }},
		{"floor: MCP ping to serve (no tool runs), stdio, warm, back-to-back" + goClient, false, func() (time.Duration, error) { return timedPing(ctx, cs) }},
	}
	if os.Geteuid() == 0 {
		// The rows above are a root serve's (its direct start). A client a user runs starts
		// serve as that user: each call gets a user namespace of its own, cloned by serve's child.
		cmd, err := unprivServe(b.Bin, b.Dir, ws)
		if err != nil {
			return err
		}
		ucs, _, err := connect(ctx, cmd)
		if err != nil {
			return fmt.Errorf("serve as uid %d: %w", unprivUID, err)
		}
		defer ucs.Close()
		fns = append(fns, timed{"run_allowed_command wc " + benchFile + " from a serve that is not root (uid 65534: a user namespace per call), MCP stdio, warm, %s" + goClient, true,
			func() (time.Duration, error) { return timedCall(ctx, ucs, ourCall()) }})
	}
	if peerCS != nil {
		fns = append(fns,
			timed{"peer " + peerVersion + " run_command \"wc " + benchFile + "\" (no isolation), MCP stdio, warm, %s" + goClient, true,
				func() (time.Duration, error) { return timedCall(ctx, peerCS, peerCall()) }},
			timed{"floor: MCP ping to the peer " + peerVersion + " (no tool runs), stdio, warm, back-to-back" + goClient, false,
				func() (time.Duration, error) { return timedPing(ctx, peerCS) }})
	}
	for _, t := range fns[1:] {
		for range warmUp {
			if _, err := t.f(); err != nil {
				return err
			}
		}
	}
	for _, spaced := range []bool{false, true} {
		rounds, how := b.N, "back-to-back"
		if spaced {
			rounds, how = min(b.N, 100), "30ms apart"
		}
		var these []timed
		for _, t := range fns {
			if !spaced || t.spaced {
				these = append(these, t)
			}
		}
		f := make([]func() (time.Duration, error), len(these))
		for i, t := range these {
			f[i] = t.f
		}
		d, err := rounds3(rounds, spaced, f)
		if err != nil {
			return err
		}
		for i, t := range these {
			what := t.what
			if strings.Contains(what, "%s") {
				what = fmt.Sprintf(what, how)
			}
			b.Row(what, d[i])
		}
	}
	return nil
}

// timedPing times one MCP ping.
func timedPing(ctx context.Context, cs *mcp.ClientSession) (time.Duration, error) {
	t0 := time.Now()
	err := cs.Ping(ctx, nil)
	return time.Since(t0), err
}

// rounds3 runs n rounds of fns, rotating their order each round; spaced rounds leave 30 ms
// before each call.
func rounds3(n int, spaced bool, fns []func() (time.Duration, error)) ([][]time.Duration, error) {
	out := make([][]time.Duration, len(fns))
	for i := range n {
		for j := range fns {
			k := (i + j) % len(fns)
			if spaced {
				time.Sleep(30 * time.Millisecond)
			}
			d, err := fns[k]()
			if err != nil {
				return nil, err
			}
			out[k] = append(out[k], d)
		}
	}
	return out, nil
}

// startRows times serve's start, spawn to initialize and tools/list answered (what a client
// waits for before its first call), interleaved with the peer's: 40 of each.
func startRows(ctx context.Context, b *scheme.BenchRun, ours func() *exec.Cmd, pr *peerRun) error {
	mks := []func() *exec.Cmd{ours}
	if pr != nil {
		mks = append(mks, pr.cmd)
	}
	out := make([][]time.Duration, len(mks))
	for i := range 41 {
		for j, mk := range mks {
			d, err := startOnce(ctx, mk())
			if err != nil {
				return err
			}
			if i > 0 { // the first start of each reads the binary into the page cache
				out[j] = append(out[j], d)
			}
		}
	}
	b.Row("serve start -> initialize + tools/list answered (spawn to answer)"+goClient, out[0])
	if len(out) > 1 {
		b.Row("peer start -> initialize + tools/list answered (spawn to answer)"+goClient, out[1])
	}
	return nil
}

// startOnce times one start: process spawn to initialize and tools/list answered; the server
// is closed after, off the clock.
func startOnce(ctx context.Context, cmd *exec.Cmd) (time.Duration, error) {
	t0 := time.Now()
	cs, _, err := connect(ctx, cmd)
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	if _, err := cs.ListTools(ctx, nil); err != nil {
		return 0, err
	}
	return time.Since(t0), nil
}

// idleRSS prints the idle serve's resident memory and notes it for the Markdown table.
func idleRSS(pid int, note func(string)) {
	st, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return
	}
	var rss string
	split := map[string]string{}
	for _, l := range strings.Split(string(st), "\n") {
		k, v, _ := strings.Cut(l, ":")
		switch k {
		case "VmRSS":
			rss = strings.Join(strings.Fields(l), " ")
		case "RssAnon", "RssFile":
			split[k] = strings.Join(strings.Fields(v), " ")
		}
	}
	if rss == "" {
		return
	}
	fmt.Println("serve idle", rss, split)
	// the split says what is serve's own (anonymous: heap, stacks) and what is the binary's pages
	// it has touched (file: the page cache's, shared by every serve)
	note(fmt.Sprintf("allowlist serve idle %s (2 s after its last call; neither a root serve nor one that is not root keeps a helper process; of it %s anonymous, %s the binary's mapped pages); target ≤ 20 MB",
		rss, split["RssAnon"], split["RssFile"]))
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
	if _, err := b.TimeCalls(ctx, warmUp, cs, ourCall()); err != nil {
		return err
	}
	d, err := b.TimeCalls(ctx, n, cs, ourCall())
	if err != nil {
		return err
	}
	row("run_allowed_command wc "+benchFile+", MCP streamable HTTP, warm, back-to-back"+scheme.GoClient("streamable HTTP"), d)
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
