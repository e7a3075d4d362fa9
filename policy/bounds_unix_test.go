//go:build unix

package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// TestLoadRefusesFIFO: a FIFO in the policy's place is refused at once instead of waited on.
func TestLoadRefusesFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.toml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() { _, err := policy.Load(fifo); done <- err }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "named pipe") || !strings.Contains(err.Error(), "give the path of a regular policy file") {
			t.Errorf("a FIFO policy: %v", err)
		}
	case <-time.After(10 * time.Second):
		// unblock the reader so the test ends
		if f, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			f.Close()
		}
		t.Fatal("Load waited on a FIFO")
	}
}
