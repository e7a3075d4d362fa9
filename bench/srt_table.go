package main

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness/hostile"
)

// srtTable is the side-by-side table: the figures, then one line per attempt with what each
// launcher let through (judged from outside), in Markdown.
func srtTable(ls []launcher, figs []srtFigures) string {
	var b strings.Builder
	b.WriteString("| | " + strings.Join(names(ls), " | ") + " |\n|---|" + strings.Repeat("---|", len(ls)) + "\n")
	cell := func(f srtFigures, l launcher, v func(srtFigures) string) string {
		switch {
		case l.why != "":
			return "not run"
		case f.err != nil:
			return "failed"
		}
		return v(f)
	}
	line := func(what string, v func(srtFigures) string) {
		var cs []string
		for i, l := range ls {
			cs = append(cs, cell(figs[i], l, v))
		}
		fmt.Fprintf(&b, "| %s | %s |\n", what, strings.Join(cs, " | "))
	}
	q := func(d []time.Duration, f float64) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[int(f*float64(len(d)-1))]
	}
	line("start → initialize + tools/list answered, p50", func(f srtFigures) string { return ms(q(f.starts, 0.5)) })
	line("tools/call (benign echo), p50", func(f srtFigures) string { return ms(q(f.calls, 0.5)) })
	line("tools/call (benign echo), p99", func(f srtFigures) string { return ms(q(f.calls, 0.99)) })
	line("peak RSS of the whole process tree", func(f srtFigures) string { return mib(f.peakRSS) })
	for i, at := range hostile.Attempts {
		line(at.What, func(f srtFigures) string {
			if i >= len(f.attempts) {
				return "?"
			}
			if f.attempts[i].Escaped {
				return "**succeeded**"
			}
			return "contained"
		})
	}
	line("attempts that succeeded", func(f srtFigures) string {
		n := 0
		for _, o := range f.attempts {
			if o.Escaped {
				n++
			}
		}
		return fmt.Sprintf("%d of %d", n, len(f.attempts))
	})
	return b.String()
}

func names(ls []launcher) []string {
	var n []string
	for _, l := range ls {
		n = append(n, l.name)
	}
	return n
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
	}
	return fmt.Sprintf("%.0f ms", float64(d)/float64(time.Millisecond))
}

// srtMarkdown is docs/wrap-vs-srt.md: how it was measured, the table, and each attempt's evidence.
func srtMarkdown(ls []launcher, figs []srtFigures, table string) string {
	var b strings.Builder
	host, _ := os.Hostname()
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Fprintf(&b, "# The hostile server: unwrapped, under sandbox-runtime, under wrap\n\nWritten by `go run -tags testhooks ./bench -only srt -o %s` on %s: %s, %d CPUs, %s/%s, kernel %s, load average at the end %s, uid %d.\n\n",
		mdOut, time.Now().UTC().Format("2006-01-02 15:04 MST"), host, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH, strings.TrimSpace(string(kernel)),
		strings.Join(strings.Fields(string(load) + " ? ? ?")[:3], " "), os.Geteuid())
	fmt.Fprintf(&b, "The same server (internal/harness/hostileserver, a Go binary) started three ways in one run: with nothing around it; under Anthropic's "+
		"sandbox-runtime (`srt`, npm `%s`, bubblewrap on Linux) with its defaults — no settings file, so reads are allowed everywhere, "+
		"writes nowhere but its own few paths, no network; and under `mcpsandbox wrap` with a policy that sets every `[wrap]` key to its default. "+
		"Start-up is 10 starts; the call rows are the benign `echo` tool back-to-back on one session; memory is VmRSS summed over the launcher and "+
		"every descendant, sampled every 5 ms from the start to the last call. Each attempt is judged from outside (internal/harness/hostile: the canary "+
		"nonce or the client's secret in what came back, the host file before and after, the arena's listeners, the host dialling the port, "+
		"the other process's state, tagged processes 3 s after the client went).\n\n", srtPackage)
	b.WriteString(table)
	b.WriteString("\n## Overhead over the unwrapped server, same run\n\n")
	for _, line := range overheads(ls, figs) {
		fmt.Fprintf(&b, "- %s\n", line)
	}
	if len(notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
	}
	b.WriteString("\n## Reproduce\n\n")
	b.WriteString("srt needs bubblewrap, socat and ripgrep on Linux (`apt-get install -y bubblewrap socat ripgrep`); the bench installs `" + srtPackage +
		"` with npm into a temporary prefix unless `srt` is on PATH or `MCPSANDBOX_BENCH_SRT` names it, and runs it with an empty HOME, so no `~/.srt-settings.json` applies. " +
		"Then `go run -tags testhooks ./bench -only srt -o docs/wrap-vs-srt.md`.")
	if v, err := exec.Command("node", "--version").Output(); err == nil {
		fmt.Fprintf(&b, " This run: node %s (the package asks for node ≥ 22.12; an older one gets an npm warning).", strings.TrimSpace(string(v)))
	}
	b.WriteString("\n\n## Evidence per attempt\n\n")
	for i, l := range ls {
		f := figs[i]
		switch {
		case l.why != "":
			fmt.Fprintf(&b, "- %s: not run: %s\n", l.name, l.why)
			continue
		case f.err != nil:
			fmt.Fprintf(&b, "- %s: failed: %v\n", l.name, f.err)
			continue
		}
		fmt.Fprintf(&b, "- %s:\n", l.name)
		for _, o := range f.attempts {
			v := "contained"
			if o.Escaped {
				v = "succeeded"
			}
			fmt.Fprintf(&b, "  - %s: %s — %s\n", o.ID, v, strings.ReplaceAll(o.Detail, "|", "\\|"))
		}
	}
	return b.String()
}

// overheads are each sandbox's start-up and call p50 minus the unwrapped server's, judged
// against issue 26's targets for wrap (start-up ≤ 50 ms, a call ≤ 1 ms).
func overheads(ls []launcher, figs []srtFigures) []string {
	if len(figs) == 0 || figs[0].err != nil || len(figs[0].starts) == 0 {
		return []string{"the unwrapped server was not measured: no overhead to give"}
	}
	p50 := func(d []time.Duration) time.Duration {
		d = slices.Clone(d)
		slices.Sort(d)
		return d[(len(d)-1)/2]
	}
	var out []string
	for i := 1; i < len(ls); i++ {
		f := figs[i]
		if ls[i].why != "" || f.err != nil || len(f.starts) == 0 {
			continue
		}
		start, call := p50(f.starts)-p50(figs[0].starts), p50(f.calls)-p50(figs[0].calls)
		line := fmt.Sprintf("%s: start-up +%s, tools/call p50 %+.2f ms, memory +%s", ls[i].name, ms(start),
			float64(call)/float64(time.Millisecond), mib(f.peakRSS-figs[0].peakRSS))
		if strings.HasPrefix(ls[i].name, "mcpsandbox wrap") {
			line += fmt.Sprintf(" (targets: start-up ≤ 50 ms %s, call ≤ 1 ms %s)", met(start <= 50*time.Millisecond), met(call <= time.Millisecond))
		}
		out = append(out, line)
	}
	return out
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
