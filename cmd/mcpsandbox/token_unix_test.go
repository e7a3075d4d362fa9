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

// atk33 F9: a --token-file under a world-writable (not sticky) directory, or one another user
// owns, is refused as such a policy file is, naming the place and the fix: whoever may replace it
// chooses the token. Catches the token-file-owned mutant.
func TestTokenFileOwnerAndAncestors(t *testing.T) {
	t.Setenv("MCPSANDBOX_TOKEN", "")
	const good = "0123456789abcdef0123456789abcdef"
	f := writeToken(t, good+"\n", 0o600)
	dir := filepath.Dir(f)
	gp := filepath.Dir(dir)
	if tok, err := httpToken(f); err != nil || tok != good {
		t.Fatalf("a 0600 token file under 0755 directories: %q, %v", tok, err)
	}
	st, err := os.Stat(gp)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(gp, 0o777)
	t.Cleanup(func() { os.Chmod(gp, st.Mode().Perm()) })
	want := "refusing to serve: the directory " + gp + " above the token file is writable by everyone: anyone could choose the token serve lets clients in with (fix: chmod o-w " + gp + ")"
	if _, err := httpToken(f); err == nil || err.Error() != want {
		t.Errorf("world-writable grandparent: httpToken = %v, want %q", err, want)
	}
	if err := serveWithToken(t, f); err == nil || err.Error() != want {
		t.Errorf("world-writable grandparent: serve --token-file = %v, want %q", err, want)
	}
	os.Chmod(gp, st.Mode().Perm())
	if os.Geteuid() != 0 {
		return
	}
	if err := os.Chown(f, 4321, 4321); err != nil {
		t.Fatal(err)
	}
	want = "refusing to serve: token file " + f + " is owned by uid 4321, not by you (uid 0) or root: whoever owns it could choose the token serve lets clients in with (fix: chown 0 " + f + ")"
	if _, err := httpToken(f); err == nil || err.Error() != want {
		t.Errorf("a token file another user owns: httpToken = %v, want %q", err, want)
	}
}
