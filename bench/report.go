package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

var (
	mdOut string
	only  string // -only: run one part's rows
	rows  []mdRow
	notes []string
)

type mdRow struct {
	what, client  string
	n             int
	p50, p90, p99 time.Duration
}

// clientSep ends a row's name with the client that measured it: every row states its client.
const clientSep = "; client: "

// splitClient splits a row's name into what was timed and by which client.
func splitClient(what string) (string, string) {
	if i := strings.LastIndex(what, clientSep); i >= 0 {
		return what[:i], what[i+len(clientSep):]
	}
	return what, "(not stated)"
}

func record(what string, d []time.Duration) {
	q := func(f float64) time.Duration { return d[int(f*float64(len(d)-1))] }
	w, c := splitClient(what)
	rows = append(rows, mdRow{w, c, len(d), q(0.5), q(0.9), q(0.99)})
}

func skipped(tw *tabwriter.Writer, what string, err error) {
	fmt.Fprintf(tw, "%s: skipped (%v)\t\t\t\t\t\t\n", what, err)
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
	cmd := "go run -tags testhooks ./bench -o " + mdOut
	if only != "" {
		cmd = "go run -tags testhooks ./bench -only " + only + " -o " + mdOut
	}
	fmt.Fprintf(&b, "# Benchmarks\n\nWritten by `%s` on %s: %s, %d CPUs, %s/%s, kernel %s, load average at the end %s, uid %d. Every row is measured in the same run as its baseline.\n\n",
		cmd, time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH,
		strings.TrimSpace(string(kernel)), strings.Join(strings.Fields(string(load))[:3], " "), os.Geteuid())
	b.WriteString("| what | client | n | p50 | p90 | p99 |\n|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %s | %s |\n", r.what, r.client, r.n, round(r.p50), round(r.p90), round(r.p99))
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
