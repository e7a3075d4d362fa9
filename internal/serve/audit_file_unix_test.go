//go:build unix

package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// ranCalls is how many calls the fake executor has run.
func ranCalls(f *fakeExec) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.sessions)
}

// The log's path made into something that is not serve's own regular file (a FIFO with or
// without a reader, a symlink to /dev/null or to another file, a second hard link, a file of
// another user): calls are refused without running, naming audit.path, nothing is written
// anywhere else, and once the path is a regular file again calls are answered without a restart.
func TestAuditLogMustBeServesOwnRegularFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(10*time.Second, 2), f, al)
	other := filepath.Join(dir, "other.txt")
	const otherText = "someone else's file\n"

	type attack struct {
		name  string
		setup func(t *testing.T) (check func(t *testing.T)) // check: nothing was written elsewhere
	}
	fifo := func(reader bool) func(t *testing.T) func(t *testing.T) {
		return func(t *testing.T) func(t *testing.T) {
			os.Remove(path)
			if err := syscall.Mkfifo(path, 0o600); err != nil {
				t.Fatal(err)
			}
			if !reader {
				return func(*testing.T) {}
			}
			fd, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK, 0)
			if err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				defer unix.Close(fd)
				buf := make([]byte, 1<<16)
				if n, _ := unix.Read(fd, buf); n > 0 {
					t.Errorf("%d bytes of audit lines went into the FIFO: %.200q", n, buf[:n])
				}
			}
		}
	}
	symlink := func(target string) func(t *testing.T) func(t *testing.T) {
		return func(t *testing.T) func(t *testing.T) {
			if err := os.WriteFile(other, []byte(otherText), 0o600); err != nil {
				t.Fatal(err)
			}
			os.Remove(path)
			if err := os.Symlink(target, path); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if b, _ := os.ReadFile(other); string(b) != otherText {
					t.Errorf("the link's target was written: %.200q", b)
				}
			}
		}
	}
	attacks := []attack{
		{"FIFO without a reader", fifo(false)},
		{"FIFO with a reader", fifo(true)},
		{"symlink to /dev/null", symlink("/dev/null")},
		{"symlink to another file", symlink(other)},
		{"second hard link", func(t *testing.T) func(t *testing.T) {
			before := fileSize(t, path)
			if err := os.Link(path, path+".hard"); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				os.Remove(path + ".hard")
				if after := fileSize(t, path); after != before {
					t.Errorf("the doubly linked log grew from %d to %d bytes", before, after)
				}
			}
		}},
		{"owned by another user", func(t *testing.T) func(t *testing.T) {
			if os.Geteuid() != 0 {
				t.Skip("chown needs root")
			}
			before := fileSize(t, path)
			if err := os.Chown(path, 4242, 4242); err != nil {
				t.Fatal(err)
			}
			return func(t *testing.T) {
				if after := fileSize(t, path); after != before {
					t.Errorf("the other user's log grew from %d to %d bytes", before, after)
				}
			}
		}},
	}
	for _, a := range attacks {
		t.Run(a.name, func(t *testing.T) {
			// a good call first: the log is open and in use when the path turns bad
			if r, err := call(t, context.Background(), cs, map[string]any{"echo": "before"}); err != nil || r.IsError {
				t.Fatalf("call before: %v %.300s", err, text(r))
			}
			check := a.setup(t)
			ran := ranCalls(f)
			r, err := call(t, context.Background(), cs, map[string]any{"echo": "SHOULD-NOT-RUN"})
			if err != nil {
				t.Fatal(err)
			}
			if !r.IsError || !strings.Contains(text(r), "audit.path") || !strings.Contains(text(r), path) || strings.Contains(text(r), "SHOULD-NOT-RUN") {
				t.Fatalf("call with the log's path made %s: %.500s", a.name, text(r))
			}
			t.Logf("refused: %.400s", text(r))
			if ranCalls(f) != ran {
				t.Fatal("the call ran although its intent could not be audited in serve's own file")
			}
			check(t)
			// fixed: the path is a regular file of serve's again
			if st, err := os.Lstat(path); err == nil && (!st.Mode().IsRegular() || a.name == "owned by another user") {
				os.Remove(path) // serve creates a new log there
			}
			r, err = call(t, context.Background(), cs, map[string]any{"echo": "back"})
			if err != nil || r.IsError || !strings.Contains(text(r), "back") {
				t.Fatalf("call once the path is fixed: %v %.300s", err, text(r))
			}
			auditLines(t, path, 0)
		})
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// Another process holding the log's lock cannot stall calls: every call (concurrent ones
// included, which must not queue behind each other) is refused within LockWait and a margin,
// naming audit.path and the lock; once the lock is released the next call is answered.
func TestHeldAuditLockRefusesCallsWithinTheBound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	al, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer al.Close()
	f := &fakeExec{}
	cs, _ := connect(t, testPolicy(30*time.Second, 4), f, al)
	holder, err := os.Open(path) // its own open file description: its flock conflicts with serve's
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if err := unix.Flock(int(holder.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	released := false
	release := func() {
		if !released {
			unix.Flock(int(holder.Fd()), unix.LOCK_UN)
			released = true
		}
	}
	defer release()
	const calls = 3
	bound := audit.LockWait + 3*time.Second // margin for a loaded machine; the mutant never answers
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*bound)
			defer cancel()
			r, err := call(t, ctx, cs, map[string]any{"echo": "SHOULD-NOT-RUN"})
			took := time.Since(t0)
			if err != nil {
				t.Errorf("call %d: no answer after %s: %v", i, took, err)
				return
			}
			t.Logf("call %d answered after %s: %.300s", i, took.Round(time.Millisecond), text(r))
			if took > bound {
				t.Errorf("call %d answered after %s, bound %s", i, took, bound)
			}
			if !r.IsError || !strings.Contains(text(r), "audit.path") || !strings.Contains(text(r), "lock") || strings.Contains(text(r), "SHOULD-NOT-RUN") {
				t.Errorf("call %d with the log's lock held: %.400s", i, text(r))
			}
		}()
	}
	wg.Wait()
	if ranCalls(f) != 0 {
		t.Fatal("a call ran although its intent could not be audited")
	}
	release()
	r, err := call(t, context.Background(), cs, map[string]any{"echo": "back"})
	if err != nil || r.IsError || !strings.Contains(text(r), "back") {
		t.Fatalf("call once the lock is released: %v %.300s", err, text(r))
	}
	auditLines(t, path, 0)
}
