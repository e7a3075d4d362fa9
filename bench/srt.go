package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/hostile"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	wrapscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/wrap"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// srtPackage is Anthropic's sandbox-runtime, measured side by side with wrap: the same hostile
// server under its default settings (no settings file: reads everywhere, writes nowhere but its
// own few paths, no network), never tuned.
const srtPackage = "@anthropic-ai/sandbox-runtime@0.0.83"

// launcher is one way of starting the hostile server: nothing around it, srt, or wrap.
type launcher struct {
	name   string
	prefix []string
	env    []string
	why    string // not measured, and why
	tmp    string // a directory to remove at the end
	// prepare writes what the launcher needs into the arena of an attack run (wrap's policy).
	prepare func(a *harness.Arena, server string) ([]string, error)
}

// srtFigures are one launcher's measurements.
type srtFigures struct {
	starts, calls []time.Duration
	peakRSS       int64
	attempts      []hostile.Outcome
	err           error
}

// srtRows measures the hostile server unwrapped, under srt's defaults and under wrap's default
// policy, in one run: start-up (start -> initialize + tools/list answered), a benign tools/call
// (p50/p99), the peak resident memory of the whole process tree, and which of the server's
// attempts are seen succeeding from outside. With -o it writes docs/wrap-vs-srt.md's table.
func srtRows(ctx context.Context, n int, bin, dir string, tw *tabwriter.Writer, row func(string, []time.Duration)) error {
	// Not under /tmp: a sandbox that gives the server a private /tmp (wrap does) would hide it.
	hdir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-bench-hostile-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(hdir)
	os.Chmod(hdir, 0o755)
	server, err := hostile.Build(ctx, hdir)
	if err != nil {
		return err
	}
	ls := []launcher{{name: "unwrapped"}, srtLauncher(ctx, dir), wrapLauncher(ctx, bin, server)}
	figs := make([]srtFigures, len(ls))
	for _, l := range ls {
		if l.tmp != "" {
			defer os.RemoveAll(l.tmp)
		}
	}
	for i, l := range ls {
		if l.why != "" {
			skipped(tw, l.name, fmt.Errorf("%s", l.why))
			continue
		}
		f := &figs[i]
		f.starts, f.err = srtStarts(ctx, l, server, 10)
		if f.err == nil {
			f.calls, f.peakRSS, f.err = srtCalls(ctx, l, server, n)
		}
		if f.err == nil {
			f.attempts, f.err = hostile.Run(ctx, hostile.Launch{Name: l.name, Prefix: l.prefix, Env: l.env, Prepare: l.prepare}, server, hostile.Attempts)
		}
		if f.err != nil {
			skipped(tw, l.name, f.err)
			continue
		}
		row(l.name+": start -> initialize + tools/list answered"+scheme.GoClient("stdio"), f.starts)
		row(l.name+": tools/call echo, back-to-back"+scheme.GoClient("stdio"), f.calls)
		fmt.Fprintf(tw, "%s: peak RSS of the tree %s\t\t\t\t\t\t\n", l.name, mib(f.peakRSS))
	}
	tw.Flush()
	table := srtTable(ls, figs)
	fmt.Println(table)
	for _, l := range overheads(ls, figs) {
		fmt.Println(l)
	}
	if mdOut != "" && only == "srt" {
		if err := os.WriteFile(mdOut, []byte(srtMarkdown(ls, figs, table)), 0o644); err != nil {
			return err
		}
		mdOut = "" // this part's page replaces the generic one
	}
	return nil
}

// srtLauncher finds srt (MCPSANDBOX_BENCH_SRT, PATH, or an npm install into dir) and checks it
// runs a command here; otherwise it says why not.
func srtLauncher(ctx context.Context, dir string) launcher {
	l := launcher{name: "srt (defaults)"}
	if _, err := exec.LookPath("bwrap"); err != nil {
		l.why = "bubblewrap is not installed (srt needs it on Linux: apt-get install bubblewrap socat ripgrep)"
		return l
	}
	srt := os.Getenv("MCPSANDBOX_BENCH_SRT")
	if srt == "" {
		srt, _ = exec.LookPath("srt")
	}
	if srt == "" {
		prefix := filepath.Join(dir, "srt")
		ictx, cancel := context.WithTimeout(ctx, 3*time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ictx, "npm", "install", "--no-audit", "--no-fund", "--prefix", prefix, srtPackage).CombinedOutput()
		if err != nil {
			l.why = fmt.Sprintf("npm install %s failed: %v: %s", srtPackage, err, lastLines(string(out), 3))
			return l
		}
		srt = filepath.Join(prefix, "node_modules", ".bin", "srt")
	}
	// srt reads ~/.srt-settings.json: an empty HOME makes sure it runs on its defaults.
	home := filepath.Join(dir, "srt-home")
	os.MkdirAll(home, 0o755)
	l.env = []string{"HOME=" + home}
	probe := exec.CommandContext(ctx, srt, "true")
	probe.Env = append(os.Environ(), l.env...)
	if out, err := probe.CombinedOutput(); err != nil {
		l.why = fmt.Sprintf("`srt true` fails here: %v: %s", err, lastLines(string(out), 3))
		return l
	}
	l.prefix = []string{srt}
	l.env = nil // the attack run's arena gives a fresh HOME of its own, without settings too
	l.prepare = func(*harness.Arena, string) ([]string, error) { return []string{srt}, nil }
	return l
}

// wrapLauncher is `mcpsandbox wrap --policy P --` with the wrap scheme's default policy
// (wrapscheme.Launch). When the server cannot start under its default limits (Go's runtime
// reserves more than 512MiB of address space as it starts, Node's more than 1GiB, which RLIMIT_AS
// counts), the launcher says so in a note and measures with limits.memory = 2GiB, named in its
// column.
func wrapLauncher(ctx context.Context, bin, server string) launcher {
	l := launcher{name: "mcpsandbox wrap (default policy)"}
	var memory policy.Size
	l.prepare = func(a *harness.Arena, _ string) ([]string, error) { return wrapscheme.Launch(bin, a.Root, memory) }
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-bench-wrap-")
	if err != nil {
		l.why = err.Error()
		return l
	}
	os.Chmod(dir, 0o755)
	l.tmp = dir
	if l.prefix, err = wrapscheme.Launch(bin, dir, 0); err != nil {
		l.why = err.Error()
		return l
	}
	if _, err := srtStarts(ctx, l, server, 1); err != nil {
		notes = append(notes, fmt.Sprintf("wrap with its default policy cannot start the (Go) hostile server: %v; measured with limits.memory = 2GiB instead", err))
		memory = 2 << 30
		l.name = "mcpsandbox wrap (default policy, limits.memory = 2GiB)"
		if l.prefix, err = wrapscheme.Launch(bin, dir, memory); err != nil {
			l.why = err.Error()
		}
	}
	return l
}

func launch(l launcher, server string) *exec.Cmd {
	argv := append(slices.Clone(l.prefix), server)
	c := exec.Command(argv[0], argv[1:]...)
	c.Env = append(os.Environ(), l.env...)
	return c
}

// srtStarts starts the server k times: start -> initialize + tools/list answered.
func srtStarts(ctx context.Context, l launcher, server string, k int) ([]time.Duration, error) {
	var d []time.Duration
	for range k {
		c := launch(l, server)
		var stderr strings.Builder
		c.Stderr = &stderr
		t0 := time.Now()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
		if err != nil {
			return nil, fmt.Errorf("start: %w; it said: %s", err, telling(stderr.String()))
		}
		_, err = cs.ListTools(ctx, nil)
		d = append(d, time.Since(t0))
		cs.Close()
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
	}
	return d, nil
}

// srtCalls makes n benign calls on one session and samples the tree's resident memory from
// the start to the last call.
func srtCalls(ctx context.Context, l launcher, server string, n int) ([]time.Duration, int64, error) {
	c := launch(l, server)
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: c}, nil)
	if err != nil {
		return nil, 0, fmt.Errorf("start: %w", err)
	}
	defer cs.Close()
	go func() {
		defer close(done)
		for {
			if r := treeRSS(c.Process.Pid); r > peak.Load() {
				peak.Store(r)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	var d []time.Duration
	for i := range n {
		t0 := time.Now()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"path": strconv.Itoa(i)}})
		if err == nil && res.IsError {
			err = fmt.Errorf("the call failed: %v", res.Content)
		}
		if err != nil {
			close(stop)
			<-done
			return nil, 0, err
		}
		d = append(d, time.Since(t0))
	}
	close(stop)
	<-done
	return d, peak.Load(), nil
}

// treeRSS sums VmRSS of pid and every descendant.
func treeRSS(root int) int64 {
	kids := map[int][]int{}
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// the fields after the command name, which may hold spaces and parentheses
		if i := strings.LastIndexByte(string(b), ')'); i > 0 {
			if f := strings.Fields(string(b[i+1:])); len(f) > 1 {
				ppid, _ := strconv.Atoi(f[1])
				kids[ppid] = append(kids[ppid], pid)
			}
		}
	}
	var sum int64
	for q := []int{root}; len(q) > 0; q = q[1:] {
		sum += rss(q[0])
		q = append(q, kids[q[0]]...)
	}
	return sum
}

func rss(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") {
			f := strings.Fields(l)
			if len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb << 10
			}
		}
	}
	return 0
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func lastLines(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(l[max(0, len(l)-n):], " / ")
}

// telling is the line of a failed start's stderr that says why: a Go runtime's fatal error, else
// the last lines.
func telling(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "fatal error") || strings.Contains(l, "pthread_create failed") {
			return strings.TrimSpace(l) + " / " + lastLines(stderr, 1)
		}
	}
	return lastLines(stderr, 2)
}
