//go:build testhooks

package docker

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/client"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// goClient states the client of the docker rows that call through serve.
var goClient = scheme.GoClient("stdio")

// loadPool is the pool size under load: the default policy's docker.pool.
const loadPool = 4

// loadRates are the offered rates of the sustained-load rows, calls a second.
var loadRates = []float64{1, 2, 4, 8}

// loadRows: the pooled per-call scheme under open-loop load. Calls are sent at a fixed rate
// whether or not earlier ones have answered (each on its own goroutine over one MCP session, as
// several agents' calls arrive), for phase at each of loadRates; a call's latency runs from its
// scheduled send time, so a backlog counts. serve's debug log says for each call whether it found
// a pooled container ("call ended ... pooled=true") or the pool empty (pooled=false: the call
// started a container cold). The pool's refill rate is read off the saturated phases: the pooled
// calls served beyond the pool's initial containers, per second.
func loadRows(ctx context.Context, b *scheme.BenchRun, image string, phase time.Duration) error {
	p := policy.Default(dksec.Name)
	dksec.Of(p).Image, dksec.Of(p).Pool = image, loadPool
	p.Audit.Path = filepath.Join(b.Dir, "docker-load-audit.jsonl")
	text, _ := policy.Marshal(p)
	pol := filepath.Join(b.Dir, "docker-load.toml")
	if err := os.WriteFile(pol, text, 0o600); err != nil {
		return err
	}
	srv := exec.Command(b.Bin, "serve", "--policy", pol, "--log-level", "debug")
	pr, pw := io.Pipe()
	srv.Stderr = pw
	var pooled, cold atomic.Int64
	go countPooled(pr, &pooled, &cold)
	defer pw.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench"}, nil).Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
	if err != nil {
		return err
	}
	defer cs.Close()
	call := &mcp.CallToolParams{Name: "run_python_sandbox", Arguments: map[string]any{"code": "print(1)"}}
	if _, err := b.TimeCalls(ctx, 2, cs, call); err != nil {
		return err
	}
	var refills []string
	for _, rate := range loadRates {
		time.Sleep(4 * time.Second) // the pool refills between phases
		p0, c0 := pooled.Load(), cold.Load()
		d, refused, err := openLoop(ctx, cs, call, rate, phase)
		if err != nil {
			return fmt.Errorf("%g calls/s: %w", rate, err)
		}
		time.Sleep(200 * time.Millisecond) // the last calls' log lines
		np, nc := pooled.Load()-p0, cold.Load()-c0
		what := fmt.Sprintf("docker pooled (pool = %d) under open-loop load at %g calls/s for %s: %d of %d calls found the pool empty",
			loadPool, rate, phase, nc, int(rate*phase.Seconds()))
		if len(refused) > 0 {
			what += fmt.Sprintf(", %d refused (timed: the answered ones)", len(refused))
			b.Note(fmt.Sprintf("docker under load at %g calls/s: %d calls refused, the first saying: %s", rate, len(refused), firstLine(refused[0])))
		}
		if len(d) == 0 {
			b.Skip(what, fmt.Errorf("no call answered"))
			continue
		}
		b.Row(what+goClient, d)
		if nc > 0 { // saturated: every pooled call beyond the pool's first containers was a refill
			refills = append(refills, fmt.Sprintf("%.1f/s at %g calls/s", float64(max(np-loadPool, 0))/phase.Seconds(), rate))
		}
	}
	if len(refills) > 0 {
		b.Note("docker pool refill rate (pooled calls served beyond the pool's first " + fmt.Sprint(loadPool) +
			" containers, per second, in the phases that ran it empty; one filler on this engine's CPUs, internal/schemes/docker/sandbox/pool.go): " + strings.Join(refills, ", "))
	} else {
		b.Note("docker pool under load: no phase ran the pool empty, so no refill rate was read off")
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// countPooled counts serve's "call ended" debug lines by whether the call's container was pooled.
func countPooled(r io.Reader, pooled, cold *atomic.Int64) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, `msg="call ended"`) {
			continue
		}
		switch {
		case strings.Contains(l, "pooled=true"):
			pooled.Add(1)
		case strings.Contains(l, "pooled=false"):
			cold.Add(1)
		}
	}
	io.Copy(io.Discard, r)
}

// openLoop sends call at rate for phase, each at its scheduled time on its own goroutine, and
// returns the time from each answered call's scheduled send to its answer, and the refusals
// (serve refuses a call whose wait for a slot, limits.max_concurrent, outlasts its timeout: an
// overload's answer, counted, not timed). A call that gets no answer at all is an error.
func openLoop(ctx context.Context, cs *mcp.ClientSession, call *mcp.CallToolParams, rate float64, phase time.Duration) (d []time.Duration, refused []string, err error) {
	n := int(rate * phase.Seconds())
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := time.Now()
	for i := range n {
		at := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		time.Sleep(time.Until(at))
		wg.Add(1)
		go func() {
			defer wg.Done()
			// params of its own: the SDK writes the call's _meta into them
			res, cerr := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.Name, Arguments: call.Arguments})
			took := time.Since(at)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case cerr != nil:
				err = cmpOr(err, cerr)
			case res.IsError:
				refused = append(refused, refusalText(res))
			default:
				d = append(d, took)
			}
		}()
	}
	wg.Wait()
	return d, refused, err
}

// refusalText is a refused call's first text, for the note.
func refusalText(res *mcp.CallToolResult) string {
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			return t.Text
		}
	}
	return "(no text)"
}

func cmpOr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// engineThroughput: how many containers a second the engine itself creates, starts (to the
// program's output) and removes with k of them at once, no serve: the ceiling of any refill,
// serial (k = 1, the pool's one filler on 2 CPUs) or parallel (k = 2).
func engineThroughput(ctx context.Context, api *client.Client, image string, k int, dur time.Duration) (float64, []time.Duration, error) {
	var mu sync.Mutex
	var all []time.Duration
	var first error
	var wg sync.WaitGroup
	end := time.Now().Add(dur)
	t0 := time.Now()
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				d, err := benchEngine(ctx, api, image, 1, 0)
				mu.Lock()
				all = append(all, d...)
				first = cmpOr(first, err)
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	slices.Sort(all)
	return float64(len(all)) / time.Since(t0).Seconds(), all, first
}
