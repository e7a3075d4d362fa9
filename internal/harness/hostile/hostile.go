// Package hostile drives the malicious test server (internal/harness/hostileserver) under any launcher
// (none, `srt`, `mcpsandbox wrap --policy P --`) and judges each of its attempts from outside,
// with the harness's arena: the canary nonce and the server's secret in what came back, host
// files before and after, the arena's listeners, processes carrying the run's tag after the
// server is gone, a port the host dials, the sibling process's state. What the server reports
// about itself is never the verdict.
//
// The harness's scenarios (internal/scenarios/wrap-*.toml) make the same attempts through `mcpsandbox
// harness`; this package is for what the harness cannot start: the same server under another
// sandbox (the bench's side-by-side with sandbox-runtime) and unwrapped (the negative control
// that every attempt here succeeds when nothing stands in the way).
package hostile

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Attempt is one thing the hostile server tries, the call that asks it to, and how it is
// judged from outside.
type Attempt struct {
	ID   string
	What string // in words, for the table
	Tool string
	// Args are the call's arguments; string values may hold the arena's placeholders ({{home}},
	// {{tag}}, {{listen_port}}, …).
	Args map[string]any
	// Escaped judges from outside; it runs after the call (processes: after the server is gone
	// when AfterExit).
	Escaped   func(o *Observed) (bool, string)
	AfterExit bool
}

// Observed is what the judge of one attempt may look at.
type Observed struct {
	A          *harness.Arena
	Output     string // what the call returned (text)
	ListenPort int
	PeakProcs  int64 // tagged processes at once, sampled during the call
	before     map[string][]byte
}

// Build compiles the hostile server into dir/bin and returns its path. A program's install
// prefix (bin/..) is what a sandbox may let it read: dir, never what holds dir.
func Build(ctx context.Context, dir string) (string, error) {
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, "bin", ServerName)
	c := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/mcpsandbox/mcpsandbox/internal/harness/hostileserver")
	c.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := c.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the hostile server: %w\n%s", err, out)
	}
	return bin, nil
}

// Outcome is one attempt's verdict.
type Outcome struct {
	ID, What string
	Escaped  bool
	Detail   string
}

// Launch is how the server is started: Prefix before the server's own argv (none: unwrapped).
type Launch struct {
	Name   string
	Prefix []string
	// Env is added to the server's environment (besides the arena's secret and fake HOME).
	Env []string
	// Prepare may write files the launcher needs (a wrap policy) into the arena before start.
	Prepare func(a *harness.Arena, server string) ([]string, error)
}

// Run starts the hostile server under l in a fresh arena, makes every attempt, and judges each.
func Run(ctx context.Context, l Launch, server string, attempts []Attempt) ([]Outcome, error) {
	a, err := harness.NewArena([]harness.Setup{
		{Path: ".git/HEAD", Content: "ref: refs/heads/main\n"},
		{Path: ".git/config", Content: "[core]\n\trepositoryformatversion = 0\n"},
		{Path: ".git/hooks/README.sample", Content: "hooks live here\n"},
	})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	defer killTagged(a.Tag)
	prefix := l.Prefix
	if l.Prepare != nil {
		if prefix, err = l.Prepare(a, server); err != nil {
			return nil, err
		}
	}
	port := a.ListenPort()
	argv := append(append([]string(nil), prefix...), server)
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = a.WS
	cmd.Env = append(append(os.Environ(), harness.SecretEnv+"="+a.Secret, "HOME="+a.Home), l.Env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "hostile-judge", Version: "1"}, nil).
		Connect(cctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 3 * time.Second}, nil)
	if err != nil {
		return nil, fmt.Errorf("start %v: %w; it said: %s", argv, err, clip(stderr.String(), 2000))
	}
	out := make([]Outcome, len(attempts))
	obs := make([]*Observed, len(attempts))
	for i, at := range attempts {
		o := &Observed{A: a, ListenPort: port, before: snapshot(a)}
		obs[i] = o
		o.Output, o.PeakProcs = call(cctx, cs, a, at)
		out[i] = Outcome{ID: at.ID, What: at.What}
		if !at.AfterExit {
			out[i].Escaped, out[i].Detail = at.Escaped(o)
		}
	}
	cs.Close() // the client goes: whatever the server left must go with it
	for i, at := range attempts {
		if at.AfterExit {
			out[i].Escaped, out[i].Detail = at.Escaped(obs[i])
		}
	}
	return out, nil
}

// call makes one attempt's call and samples the tagged processes while it runs.
func call(ctx context.Context, cs *mcp.ClientSession, a *harness.Arena, at Attempt) (string, int64) {
	args, _ := harness.ExpandAny(a, at.Args).(map[string]any)
	var peak atomic.Int64
	sctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for sctx.Err() == nil {
			if n := int64(len(tagged(a.Tag))); n > peak.Load() {
				peak.Store(n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: at.Tool, Arguments: args})
	stop()
	<-done
	if err != nil {
		return "call failed: " + err.Error(), peak.Load()
	}
	var b strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			b.WriteString(t.Text)
		}
	}
	return b.String(), peak.Load()
}

// tagged lists the pids whose argv carries tag.
func tagged(tag string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline"); err == nil && bytes.Contains(b, []byte(tag)) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func killTagged(tag string) {
	for _, pid := range tagged(tag) {
		if p, err := os.FindProcess(pid); err == nil {
			p.Kill()
		}
	}
}

// watched are the host files the write attempts aim at, relative to the arena.
func watched(a *harness.Arena) []string {
	return []string{filepath.Join(a.Home, ".bashrc"), filepath.Join(a.WS, ".git", "hooks", "pre-commit"),
		filepath.Join(a.Outside, "planted-"+a.Tag), filepath.Join(os.TempDir(), "hostile-"+a.Tag),
		filepath.Join(a.WS, "fill-"+a.Tag)}
}

func snapshot(a *harness.Arena) map[string][]byte {
	m := map[string][]byte{}
	for _, p := range watched(a) {
		if b, err := os.ReadFile(p); err == nil {
			m[p] = b
		}
	}
	return m
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// ServerName is the hostile server's binary name (Build's output): the wrap scheme's harness
// adapter attacks a wrapped server only when [wrap].command runs it.
const ServerName = "hostileserver"
