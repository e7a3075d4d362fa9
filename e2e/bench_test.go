package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkBareExec is the raw baseline: fork+exec of wc with no sandbox and no MCP.
func BenchmarkBareExec(b *testing.B) {
	dir := b.TempDir()
	write(b, filepath.Join(dir, "f"), "a b c\n", 0o644)
	for b.Loop() {
		cmd := exec.Command("/usr/bin/wc", "f")
		cmd.Dir = dir
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAllowlistCall: run_allowed_command wc FILE through MCP stdio with every layer on.
func BenchmarkAllowlistCall(b *testing.B) {
	f := newFixture(b, nil)
	for b.Loop() {
		if res, r := f.call("wc", "notes.txt"); res.IsError || r.ExitCode != 0 {
			b.Fatalf("call failed: %s", text(res))
		}
	}
}

// BenchmarkServeStart: `mcpsandbox serve` started by an MCP client over stdio until initialize
// and tools/list are answered (the client's view of start-up), then closed. p50-ms and p99-ms
// are of those starts; cpu-ns/op is serve's own CPU to the answer, which the host's other load
// inflates much less than the wall time. With MCPSANDBOX_BENCH_BASELINE=BINARY (another build,
// e.g. main's), each round also starts that binary, interleaved, reported as base-* (ns/op then
// covers both starts).
func BenchmarkServeStart(b *testing.B) {
	f := newFixture(b, nil)
	base := os.Getenv("MCPSANDBOX_BENCH_BASELINE")
	var ours, theirs startStats
	for b.Loop() {
		ours.add(b, binPath, f.policyPath)
		if base != "" {
			theirs.add(b, base, f.policyPath)
		}
	}
	ours.report(b, "")
	if base != "" {
		theirs.report(b, "base-")
	}
}

// startStats collects serve starts: the wall time to tools/list answered and serve's CPU to it.
type startStats struct {
	wall []time.Duration
	cpu  time.Duration
}

func (s *startStats) add(b *testing.B, bin, policyPath string) {
	ctx := context.Background()
	srv := exec.Command(bin, "serve", "--policy", policyPath, "--log-level", "error")
	t0 := time.Now()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := cs.ListTools(ctx, nil); err != nil {
		b.Fatal(err)
	}
	s.wall = append(s.wall, time.Since(t0))
	s.cpu += threadsCPU(srv.Process.Pid)
	cs.Close()
}

func (s *startStats) report(b *testing.B, prefix string) {
	if len(s.wall) == 0 {
		return
	}
	w := slices.Clone(s.wall)
	slices.Sort(w)
	at := func(q float64) float64 { return float64(w[int(q*float64(len(w)-1))]) / 1e6 }
	b.ReportMetric(at(0.5), prefix+"p50-ms")
	b.ReportMetric(at(0.99), prefix+"p99-ms")
	b.ReportMetric(float64(s.cpu)/float64(len(s.wall)), prefix+"cpu-ns/op")
}

// threadsCPU is the CPU time a process's threads have used so far (/proc/PID/task/*/schedstat).
func threadsCPU(pid int) time.Duration {
	var cpu time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		var ns int64
		fmt.Sscan(string(b), &ns)
		cpu += time.Duration(ns)
	}
	return cpu
}
