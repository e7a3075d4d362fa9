//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"golang.org/x/sys/unix"
)

// BenchmarkNew is the executor's share of serve's start-up on the path to the first answer:
// New with the built-in policy's commands (pinning each, the protect list, the git set-up) and
// its tools' list, without the layer probe (Lazy: that runs beside the client's handshake).
func BenchmarkNew(b *testing.B) {
	root := b.TempDir()
	os.Chmod(root, 0o755)
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	p, err := defaultPolicy(ws)
	if err != nil {
		b.Fatal(err)
	}
	defer cpuMetrics(b)()
	for b.Loop() {
		e, err := New(p, Options{HelperPath: "/bin/false", Lazy: true})
		if err != nil {
			b.Fatal(err)
		}
		_ = e.Tools()
		e.Close()
	}
}

// A literal protect pattern is matched by equality, not by a compiled regexp (compiling the
// default list's 120-odd literals was half of New's time), and equality is exactly what the
// pattern's glob matches: names with regexp metacharacters, case, a trailing newline, a
// prefix or an extension do not match, for an unanchored name and an anchored path alike.
func TestLiteralProtectMatchesAsItsGlob(t *testing.T) {
	pats, err := compileProtect(append(slices.Clone(policy.DefaultProtect), "a.b", "x+y", "(p)|q", `back\slash`, "dir/.env", "^$"))
	if err != nil {
		t.Fatal(err)
	}
	tries := []string{"", ".git", ".gitx", "x.git", ".GIT", ".git\n", "a.b", "axb", "x+y", "xxy", "(p)|q", "q", `back\slash`,
		"dir/.env", "dir/.envrc", "dir", "^$", "a", ".envrc", ".env", "CLAUDE.md", "claude.md"}
	literals := 0
	for _, p := range pats {
		if !p.literal {
			continue
		}
		literals++
		if p.re != nil {
			t.Errorf("literal pattern %q was compiled to a regexp", p.src)
		}
		re, err := policy.CompileGlob(p.src)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range append(tries, p.src, p.src+"x", "x"+p.src) {
			if got, want := p.matches(s), re.MatchString(s); got != want {
				t.Errorf("pattern %q on %q: %v, its glob says %v", p.src, s, got, want)
			}
		}
	}
	if literals < 100 {
		t.Errorf("only %d literal patterns judged: the default list changed?", literals)
	}
}

// cpuMetrics reports the CPU time per op of this process (all its threads) and of its waited-for
// children (the commands), beside the wall time: on a shared host the wall time carries the
// other tenants' load, the CPU time much less.
func cpuMetrics(b *testing.B) func() {
	usage := func(who int) time.Duration {
		var ru unix.Rusage
		_ = unix.Getrusage(who, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	self, kids := usage(unix.RUSAGE_SELF), usage(unix.RUSAGE_CHILDREN)
	return func() {
		n := float64(b.N)
		b.ReportMetric(float64(usage(unix.RUSAGE_SELF)-self)/n, "cpu-ns/op")
		b.ReportMetric(float64(usage(unix.RUSAGE_CHILDREN)-kids)/n, "child-cpu-ns/op")
	}
}
