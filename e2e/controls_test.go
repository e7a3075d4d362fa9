package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestDetectorsFire is the negative control for every detector the containment tests rely on:
// under a weakened policy, or with the breach done by hand outside the sandbox, each must fire.
// A detector that stays silent here would make the containment tests prove nothing.
func TestDetectorsFire(t *testing.T) {
	// A long timeout: a control whose call the load of a shared machine times out before it
	// acts would be silent for the wrong reason.
	f := newFixture(t, func(p *policy.Policy, _ *fixture) {
		alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll})
		p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	})

	t.Run("tcp listener sees a connection when network is allowed", func(t *testing.T) {
		_, r := f.py(fmt.Sprintf("import socket\nsocket.create_connection(('127.0.0.1', %d), timeout=2)\nprint('CONNECTED')", f.a.TCPPort()))
		if !eventually(func() bool { return f.a.TCPHits() > 0 }) {
			t.Fatalf("TCP detector silent under network = true: %+v", r)
		}
	})
	t.Run("udp listener sees packets when network is allowed", func(t *testing.T) {
		_, r := f.py(fmt.Sprintf("import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\nfor i in range(5): s.sendto(b'x', ('127.0.0.1', %d))", f.a.UDPPort()))
		if !eventually(func() bool { return f.a.UDPHits() > 0 }) {
			t.Fatalf("UDP detector silent under network = true: %+v", r)
		}
	})
	t.Run("stub resolver sees the tagged query when network is allowed", func(t *testing.T) {
		_, r := f.py(dnsProbe(f))
		if !eventually(func() bool { return len(f.a.DNSQueries()) > 0 }) {
			t.Fatalf("DNS detector silent under network = true: %+v", r)
		}
	})
	t.Run("process counter sees a tree of forks", func(t *testing.T) {
		stop := make(chan struct{})
		peak := make(chan int, 1)
		go func() { peak <- peakProcs(f.tag, stop) }()
		_, r := f.py("import os, time\nfor i in range(10):\n    if os.fork() == 0:\n        time.sleep(1); os._exit(0)\ntime.sleep(1.2)")
		close(stop)
		if n := <-peak; n < 11 {
			t.Fatalf("process counter saw %d processes of a call that ran 11: %+v", n, r)
		}
	})
	t.Run("privilege probe reaches the kernel outside the sandbox", func(t *testing.T) {
		// The same probe as TestPythonAttacksContained/privilege, run by the harness outside
		// any sandbox as the sandbox's uid: ptrace of the sibling and the FIFO succeed, so the
		// EPERM inside is the sandbox's.
		out, _ := f.a.RunOutside(python, "-c", privilegeProbe(f))
		got := syscallResults(out)
		for _, name := range []string{"ptrace_attach_sibling", "mknodat_fifo", "unshare_user"} {
			if got[name].ret < 0 {
				t.Errorf("%s failed outside the sandbox too (errno %d): the probe proves nothing\n%s", name, got[name].errno, out)
			}
		}
		if _, err := os.Lstat(filepath.Join(f.ws, "fifo0")); err != nil {
			t.Errorf("the FIFO made outside the sandbox is not there: %v", err)
		}
		os.Remove(filepath.Join(f.ws, "fifo0"))
	})
	t.Run("sibling detector sees a tracer", func(t *testing.T) {
		g := newFixture(t, nil)
		if h := g.a.SiblingTouched(); h != "" {
			t.Fatalf("sibling touched before anything ran: %s", h)
		}
		if err := g.a.TraceSibling(); err != nil {
			t.Fatal(err)
		}
		if h := g.a.SiblingTouched(); h == "" {
			t.Fatal("sibling detector silent while the harness traces it")
		}
	})
	t.Run("leak detector sees the nonce", func(t *testing.T) {
		write(t, filepath.Join(f.ws, "copied.txt"), f.nonce, 0o666)
		_, r := f.call("cat", "copied.txt")
		if !f.leaked(r.Stdout) {
			t.Fatalf("leak detector silent on %q", r.Stdout)
		}
	})
	t.Run("outside detector sees a planted file and a changed canary", func(t *testing.T) {
		p := filepath.Join(f.outside, "pwned")
		write(t, p, "x", 0o644)
		if bad := f.outsideChanged(); !slices.Contains(bad, "created "+p) {
			t.Fatalf("outside detector reported %v", bad)
		}
		os.Remove(p)
		c := filepath.Join(f.outside, "canary.txt")
		write(t, c, "changed", 0o666)
		if bad := f.outsideChanged(); !slices.Contains(bad, "changed "+c) || slices.Contains(bad, "created "+p) {
			t.Fatalf("canary change not seen, or a removed file still reported: %v", bad)
		}
		write(t, c, f.nonce, 0o666)
	})
	t.Run("survivor scan finds a tagged process", func(t *testing.T) {
		cmd := exec.Command(python, "-c", "import time; time.sleep(30)", f.tag)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		// Start returns at the fork: the tagged argv is there once the exec has happened, which
		// on a loaded machine may be a moment later (a CI run's scan came first once).
		found := survivors(f.tag)
		for deadline := time.Now().Add(5 * time.Second); len(found) == 0 && time.Now().Before(deadline); {
			time.Sleep(50 * time.Millisecond)
			found = survivors(f.tag)
		}
		if len(found) == 0 {
			t.Fatal("survivor scan missed a live tagged process")
		}
		cmd.Process.Kill()
		cmd.Wait()
		if s := survivors(f.tag); len(s) != 0 {
			t.Fatalf("survivor scan still sees %v", s)
		}
	})
	t.Run("host file readable when the path rule is lifted", func(t *testing.T) {
		// The kernel layer alone: with allow_outside_paths the argument check is off, and cat
		// of a host file must still fail (Landlock). The control: the same cat of a file inside
		// the workspace by absolute path works, so the failure is the sandbox, not cat.
		g := newFixture(t, func(p *policy.Policy, _ *fixture) {
			for i := range alsec.Of(p).Commands {
				alsec.Of(p).Commands[i].AllowOutsidePaths = true
			}
		})
		_, r := g.call("cat", filepath.Join(g.outside, "canary.txt"))
		if g.leaked(r.Stdout) || !strings.Contains(r.Stderr, "Permission denied") {
			t.Fatalf("Landlock did not stop a read outside: %+v", r)
		}
		_, r = g.call("cat", filepath.Join(g.ws, "notes.txt"))
		if r.ExitCode != 0 || !strings.Contains(r.Stdout, "apple") {
			t.Fatalf("control read inside failed: %+v", r)
		}
	})
	t.Run("responsiveness check fails on a dead server", func(t *testing.T) {
		g := newFixture(t, nil)
		g.cs.Close()
		if g.responsive() {
			t.Fatal("responsiveness check passed against a closed session")
		}
	})
}

// eventually polls cond for up to 2s: a listener counts a connection asynchronously.
func eventually(cond func() bool) bool {
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}
