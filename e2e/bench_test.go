package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// and tools/list are answered (the client's view of start-up), then closed. cpu-ns/op is
// serve's own CPU to the answer, which the host's other load inflates much less than the wall
// time.
func BenchmarkServeStart(b *testing.B) {
	f := newFixture(b, nil)
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		srv := exec.Command(binPath, "serve", "--policy", f.policyPath, "--log-level", "error")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: srv}, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := cs.ListTools(ctx, nil); err != nil {
			b.Fatal(err)
		}
		cpu += threadsCPU(srv.Process.Pid)
		cs.Close()
	}
	b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
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
