package sandbox

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	"golang.org/x/sys/unix"
)

// What serve reads to find the workspace's protected paths (a .git file's "gitdir:", a git
// directory's commondir, its config and the files that config includes) is read without
// waiting: a FIFO in any of those places, say a config include under the host's /tmp where any
// local user can put one, held every call of serve before its command started, past its
// timeout, and with max_concurrent calls held, every session (attack round atk23; the
// workspace layer's reader was made so in an earlier round, this one was not).
func TestProtectionReadsNoFIFO(t *testing.T) {
	e, ws, _ := testExec(t, func(al *alsec.Allowlist) {})
	other := t.TempDir()
	fifo := filepath.Join(other, "team.gitconfig")
	if err := unix.Mkfifo(fifo, 0o666); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(ws, ".git"), 0o755)
	os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[include]\n\tpath = "+fifo+"\n"), 0o644)
	sub := filepath.Join(ws, "sub")
	os.Mkdir(sub, 0o755)
	if err := unix.Mkfifo(filepath.Join(sub, ".git"), 0o666); err != nil { // a .git that is neither a directory nor a file
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		p := e.protection()
		p.match(filepath.Join(sub, "x"))
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		// Let the reads go: open each FIFO for writing once.
		for _, f := range []string{fifo, filepath.Join(sub, ".git")} {
			if fd, err := unix.Open(f, unix.O_WRONLY|unix.O_NONBLOCK, 0); err == nil {
				unix.Close(fd)
			}
		}
		t.Fatal("finding the protected paths waited on a FIFO")
	}
}
