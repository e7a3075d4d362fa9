//go:build unix

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial36 F12: SIGHUP (the terminal closed, an ssh session dropped) ends a command in order, as
// SIGTERM does, instead of killing it outright: verify killed so left its arenas in /var/tmp.
// Here serve over stdio, waiting for a client, is sent SIGHUP: it must return (exit status, not
// a death by signal). Red without it (mutant sighup-kills-outright).
func TestSIGHUPEndsACommandInOrder(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	wc, err := generate.Pin("wc")
	if err != nil {
		t.Skipf("no wc to pin: %v", err)
	}
	cmd, in, errb := serveChild(t, wcPolicy(t, ws, wc))
	defer in.Close()
	cmd.Process.Signal(syscall.SIGHUP)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("serve went on after SIGHUP; stderr:\n%s", errb.String())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("serve was killed by %v instead of ending in order; stderr:\n%s", ws.Signal(), errb.String())
		}
	}
}

// wcPolicy is an allowlist policy file that pins wc, with the workspace ws.
func wcPolicy(t *testing.T, ws string, wc policy.Command) string {
	f := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(f, []byte(fmt.Sprintf("version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = %q\n[[allowlist.commands]]\nname = \"wc\"\npath = %q\nsha256 = %q\n", ws, wc.Path, wc.SHA256)), 0o600)
	return f
}

// serveChild starts serve over stdio with the policy file f (its stdin held open: it waits for a
// client) and returns once it says it serves, or after 20 s.
func serveChild(t *testing.T, f string) (*exec.Cmd, io.WriteCloser, *syncBuf) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--policy", f)
	cmd.Env = append(os.Environ(), "MCPSANDBOX_CMD_TEST_CHILD=1")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	errb := &syncBuf{}
	cmd.Stderr = errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "serving") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return cmd, in, errb
}

// trial48 F2: a root serve whose allowlist workspace root owns (mode 755) logged
// workspace_writable=true and --check said nothing, while every write of its calls (run as
// nobody) failed. Both now say so, with verify's MS113 words and fix; once the workspace is
// nobody's, neither does. Red under mutant serve-workspace-unwritable-unsaid.
func TestServeSaysWorkspaceUnwritableForCallsUser(t *testing.T) {
	wc, err := generate.Pin("wc")
	switch {
	case os.Geteuid() != 0:
		t.Skip("the calls run as another user only under a root serve")
	case err != nil:
		t.Skipf("no wc to pin: %v", err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	ws := filepath.Join(t.TempDir(), "ws")
	os.Mkdir(ws, 0o755)
	for d := filepath.Dir(ws); d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755) // nobody reaches it, as a workspace under /srv
	}
	f := wcPolicy(t, ws, wc)
	why := "under root, commands run as nobody (65534), and so do the file tools: the workspace " + ws + " (owner uid 0, mode -rwxr-xr-x) is not theirs to write"
	fix := "chown -R 65534:65534 " + ws + ", or set allowlist.user"
	out, _, err := runCLI("serve", "--policy", f, "--check")
	if err != nil || !strings.Contains(out, "\nwarning: "+why) || !strings.Contains(out, "\n  fix: "+fix+"\n") {
		t.Errorf("serve --check: %v\n%s", err, out)
	}
	if log := serveStartLog(t, f); !strings.Contains(log, "workspace_writable=false") || !strings.Contains(log, why) || !strings.Contains(log, fix) {
		t.Errorf("serve's start log:\n%s", log)
	}

	os.Chown(ws, 65534, 65534)
	if out, _, err := runCLI("serve", "--policy", f, "--check"); err != nil || strings.Contains(out, "warning:") {
		t.Errorf("serve --check of a workspace nobody writes: %v\n%s", err, out)
	}
	if log := serveStartLog(t, f); !strings.Contains(log, "workspace_writable=true") || strings.Contains(log, "not theirs") {
		t.Errorf("serve's start log of a workspace nobody writes:\n%s", log)
	}
}

// serveStartLog is serve's stderr until it says it serves, and the lines right after.
func serveStartLog(t *testing.T, f string) string {
	cmd, in, errb := serveChild(t, f)
	time.Sleep(100 * time.Millisecond) // the warning follows the serving line
	in.Close()
	cmd.Wait()
	return errb.String()
}

// syncBuf is a strings.Builder the child's stderr copier writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
