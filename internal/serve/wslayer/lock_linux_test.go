//go:build linux

package wslayer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A commit does not wait without bound for the workspace's lock, which anyone who can open the
// workspace directory can take (attack round atk24c, F1: a local user's `flock -x WS sleep` held
// every commit, each call's slot and serve's exit): past the commit's deadline it says so and
// applies nothing. Once the lock is free, the same commit applies.
func TestCommitNotHeldByAForeignLock(t *testing.T) {
	ws := t.TempDir()
	fd, err := unix.Open(ws, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if err := unix.Flock(fd, unix.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	commit := func() (time.Duration, error) {
		l, err := New(t.TempDir(), ws)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(l.Upper, "hello.txt"), []byte("hi"), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		start := time.Now()
		go func() {
			_, err := l.Commit(Rules{Quota: 1 << 20, UID: -1, GID: -1, SandboxPath: ws, Deadline: time.Now().Add(time.Second)})
			done <- err
		}()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(6 * time.Second):
			unix.Flock(fd, unix.LOCK_UN) // let it go, so the test ends
			<-done
			t.Fatal("the commit waited 6 s (past its 1 s deadline) for a lock another open of the workspace holds")
			return 0, nil
		}
	}
	took, err := commit()
	if err == nil || !strings.Contains(err.Error(), "held its lock") {
		t.Errorf("a commit behind a held lock: %v after %s (want the lock's error)", err, took)
	}
	if _, serr := os.Stat(filepath.Join(ws, "hello.txt")); serr == nil {
		t.Error("a commit that could not lock the workspace applied its file")
	}
	unix.Flock(fd, unix.LOCK_UN)
	if _, err := commit(); err != nil {
		t.Errorf("the commit once the lock is free: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "hello.txt")); err != nil || string(b) != "hi" {
		t.Errorf("the commit once the lock is free did not apply: %q %v", b, err)
	}
}
