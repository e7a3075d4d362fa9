//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
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
	f := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(f, []byte(fmt.Sprintf("version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = %q\n[[allowlist.commands]]\nname = \"wc\"\npath = %q\nsha256 = %q\n", ws, wc.Path, wc.SHA256)), 0o600)
	cmd := exec.Command(os.Args[0], "serve", "--policy", f)
	cmd.Env = append(os.Environ(), "MCPSANDBOX_CMD_TEST_CHILD=1")
	in, err := cmd.StdinPipe() // held open: serve waits for a client
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var errb syncBuf
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(errb.String(), "serving") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
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

// syncBuf is a strings.Builder the child's stderr copier writes while the test reads it.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
