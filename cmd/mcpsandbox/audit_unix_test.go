//go:build unix

package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// runCLICtx is runCLI with a context (a signal's), giving up after limit.
func runCLICtx(t *testing.T, ctx context.Context, limit time.Duration, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var out, errb bytes.Buffer
	done := make(chan error, 1)
	go func() {
		root := NewCmdRoot(&Factory{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
		root.SetArgs(args)
		done <- root.ExecuteContext(ctx)
	}()
	select {
	case err = <-done:
		return out.String(), errb.String(), err
	case <-time.After(limit):
		t.Fatalf("%v did not end within %s", args, limit)
		return "", "", nil
	}
}

// audit verify refuses what is not a regular file (a FIFO with or without a writer,
// /dev/zero, a directory) at once, saying what it is, instead of reading it forever.
func TestAuditVerifyRefusesNonRegularFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ name, path, want string }{
		{"FIFO without a writer", fifo, "a FIFO"},
		{"/dev/zero", "/dev/zero", "a character device"},
		{"directory", dir, "a directory"},
	}
	for _, c := range cases {
		_, _, err := runCLICtx(t, context.Background(), 5*time.Second, "audit", "verify", c.path)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "not a regular file") {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// a FIFO with a writer that never stops
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		line := bytes.Repeat([]byte("x"), 4096)
		for {
			select {
			case <-stop:
				return
			default:
				w.Write(line)
			}
		}
	}()
	if _, _, err := runCLICtx(t, context.Background(), 5*time.Second, "audit", "verify", fifo); err == nil || !strings.Contains(err.Error(), "a FIFO") {
		t.Errorf("FIFO with a writer: %v", err)
	}
}

// audit verify stops reading when its context ends (SIGINT/SIGTERM reach it as the
// command's context) and says so.
func TestAuditVerifyHonoursTheSignalContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		l.Append(audit.Entry{Tool: "t", Decision: "ran"})
	}
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the signal came
	_, _, err = runCLICtx(t, ctx, 5*time.Second, "audit", "verify", path)
	if err == nil || !strings.Contains(err.Error(), "stopped after 0 lines") {
		t.Fatalf("verify after its context ended: %v", err)
	}
}
