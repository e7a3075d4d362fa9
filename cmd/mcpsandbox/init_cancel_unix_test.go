//go:build unix

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Ctrl-C (or SIGTERM) while init starts the entry to check it ended with "the server entry does
// not start … context canceled", blaming the entry for the user's own cancel (trial40 F3). Now
// init says it was cancelled and what it put back; nothing is written, no menu follows.
// Catches init-check-cancel-wording.
func TestInitCancelledDuringTheStartCheck(t *testing.T) {
	dir, home := t.TempDir(), t.TempDir()
	os.Chmod(dir, 0o755)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	mark, bin := filepath.Join(dir, "started"), filepath.Join(dir, "mcpsandbox")
	// a stand-in entry that starts and never answers, as a slow start would
	os.WriteFile(bin, []byte("#!/bin/sh\n: > "+mark+"\nexec sleep 60\n"), 0o755)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for deadline := time.Now().Add(40 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if _, err := os.Stat(mark); err == nil {
				break
			}
		}
		cancel() // the signal, as main's NotifyContext gives it
	}()
	pol := filepath.Join(home, "p.toml")
	_, _, err := runCLICtx(t, ctx, 50*time.Second, "init", "--scheme", "allowlist", "--workspace", filepath.Join(home, "ws"), "--allow", "wc",
		"--command", bin, "--client", "cursor", "--project", t.TempDir(), "--yes", "--policy-out", pol)
	if _, serr := os.Stat(mark); serr != nil {
		t.Fatalf("the stand-in entry never started: %v", err)
	}
	if err == nil || !strings.HasPrefix(err.Error(), "cancelled while init was checking that the server entry starts: nothing was changed") ||
		strings.Contains(err.Error(), "does not start") || strings.Contains(err.Error(), "context canceled") {
		t.Errorf("a cancel during the start check: %v", err)
	}
	for _, f := range []string{pol, filepath.Join(home, ".cursor", "mcp.json")} {
		if _, serr := os.Stat(f); serr == nil {
			t.Errorf("%s was written", f)
		}
	}
}
