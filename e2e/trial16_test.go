package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// A client stops the wrap it started with SIGTERM (or the user with ^C): wrap kills the server's
// tree and ends as serve does, exit 0 and no error, instead of "mcpsandbox: context canceled"
// and exit 1 in the client's log, as a new user's trial saw. Red with mutant wrap-signal-error.
func TestWrapSIGTERMEndsQuietly(t *testing.T) {
	bin := buildWrapServer(t)
	r := newWrapRig(t, "")
	cs, cmd := r.connect(t, nil, bin)
	if _, err := cs.ListTools(t.Context(), nil); err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for cmd.ProcessState == nil && time.Now().Before(deadline) {
		cs.Close() // waits for the process
		time.Sleep(50 * time.Millisecond)
	}
	if cmd.ProcessState == nil {
		t.Fatal("wrap did not end after SIGTERM")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(r.stderr.String(), "context canceled") {
		t.Errorf("wrap after SIGTERM: exit %d, stderr:\n%s", code, r.stderr)
	}
}
