package e2e

import (
	"fmt"
	"os"
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
	// Wait for wrap to end by itself (a zombie, not reaped yet) before closing the session: the
	// close shuts wrap's stdin, and a relay that sees its client gone ends quietly whatever the
	// signal did, so closing first let the mutant pass at random.
	deadline := time.Now().Add(20 * time.Second)
	for !exited(cmd.Process.Pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !exited(cmd.Process.Pid) {
		t.Fatal("wrap did not end after SIGTERM")
	}
	cs.Close() // reaps it
	if cmd.ProcessState == nil {
		t.Fatal("wrap's exit status was not collected")
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 || strings.Contains(r.stderr.String(), "context canceled") {
		t.Errorf("wrap after SIGTERM: exit %d, stderr:\n%s", code, r.stderr)
	}
}

// exited reports whether process pid has ended (a zombie waiting to be reaped, or gone).
func exited(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) STATE ...: comm may hold spaces and parentheses; the state follows the last ')'
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] == 'Z' || s[i+2] == 'X'
}
