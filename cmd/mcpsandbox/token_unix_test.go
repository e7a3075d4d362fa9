//go:build unix

package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/tomlbound"
)

// A --token-file that is a FIFO (nobody writing) is refused at once instead of holding serve's
// start forever, and one larger than a token could be is refused instead of read whole. Red
// without the bounded read (os.ReadFile blocks on the FIFO: the test's deadline fails it).
func TestTokenFileBounded(t *testing.T) {
	t.Setenv("MCPSANDBOX_TOKEN", "")
	fifo := filepath.Join(t.TempDir(), "token")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := httpToken(fifo); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, tomlbound.ErrNotRegular) || !strings.Contains(err.Error(), fifo) {
			t.Errorf("FIFO token file: httpToken = %v, want a refusal naming it as not a regular file", err)
		}
	case <-time.After(5 * time.Second):
		// unblock the reader so the test ends
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Close()
		}
		t.Fatal("httpToken waited on a FIFO token file")
	}

	big := writeToken(t, strings.Repeat("a", maxTokenFile+1), 0o600)
	var tl *tomlbound.TooLargeError
	if _, err := httpToken(big); !errors.As(err, &tl) {
		t.Errorf("token file of %d bytes: httpToken = %v, want a TooLargeError", maxTokenFile+1, err)
	}
	ok := writeToken(t, strings.Repeat("a", maxTokenFile-1)+"\n", 0o600)
	if tok, err := httpToken(ok); err != nil || len(tok) != maxTokenFile-1 {
		t.Errorf("token file of %d bytes: httpToken = %d chars, %v; want it read", maxTokenFile, len(tok), err)
	}
}
