package e2e

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Issue 9 item 8: explain and --check speak to people. A root server's user namespace is "not
// needed" (not NO), satisfied Landlock layers say what they do (no "needs ABI"), explain's text
// names the scenarios that attack each threat and has no "none of ... is in force" phrasing, and
// serve started by hand on a terminal says on stderr that it waits for an MCP client.
func TestPlainWords(t *testing.T) {
	out, err := exec.Command(binPath, "serve", "--default", "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("serve --default --check: %v\n%s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		if strings.HasPrefix(line, "landlock:") && strings.Contains(line, " yes ") && strings.Contains(line, "needs Landlock ABI") {
			t.Errorf("a satisfied layer reads like a gap: %q", line)
		}
		if strings.HasPrefix(line, "user namespace") && os.Geteuid() == 0 && !strings.Contains(line, "not needed") {
			t.Errorf("root's user namespace: %q", line)
		}
	}
	exp, err := exec.Command(binPath, "explain", "--default").CombinedOutput()
	if err != nil {
		t.Fatalf("explain --default: %v\n%s", err, exp)
	}
	if !strings.Contains(string(exp), "attacked by: ") || strings.Contains(string(exp), "none of ") {
		t.Errorf("explain text: scenario names missing or jargon phrasing:\n%s", exp)
	}
	if !strings.Contains(string(exp), "(RLIMIT_NPROC)") {
		t.Errorf("explain text: the mechanism should follow the plain words in parentheses:\n%s", exp)
	}

	cmd := exec.Command(binPath, "serve", "--default")
	tty, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Signal(syscall.SIGTERM); cmd.Wait(); tty.Close() }()
	got := make(chan string, 1)
	go func() {
		var b strings.Builder
		buf := make([]byte, 4096)
		for !strings.Contains(b.String(), "waiting for an MCP client") {
			n, err := tty.Read(buf)
			if err != nil {
				break
			}
			b.Write(buf[:n])
		}
		got <- b.String()
	}()
	select {
	case s := <-got:
		if !strings.Contains(s, "waiting for an MCP client on stdin") {
			t.Errorf("serve on a terminal did not say it waits for a client: %q", s)
		}
	case <-time.After(20 * time.Second):
		t.Error("serve on a terminal said nothing within 20s")
	}
}
