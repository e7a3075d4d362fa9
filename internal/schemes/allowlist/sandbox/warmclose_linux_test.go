package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox/helper"
)

// After Close no exec helper of the executor is left: the next call's warm helper is started
// once a call's command is done, so a serve closed right after its last call closes while that
// start runs, and one put in the slot after Close emptied it waited there for good (a process
// per executor closed so, until serve's own exit). Close waits for the start and discards it.
func TestNoWarmHelperLeftAfterClose(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	args, _ := json.Marshal(map[string]any{"command": "wc", "args": []string{"f"}})
	// Each warm helper's start takes 200 ms more after Close began, as on a loaded machine.
	hook := func(e *Executor) {
		if e.closed.Load() {
			return
		}
		for range 20 {
			if e.closed.Load() {
				time.Sleep(200 * time.Millisecond)
				return
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	helperStartedHook.Store(&hook)
	t.Cleanup(func() { helperStartedHook.Store(nil) })
	left := 0
	for range 3 {
		e, err := New(wcPolicy(t), Options{HelperPath: exe, viaHelper: true})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.Ready(); err != nil {
			t.Fatal(err)
		}
		if _, err := e.run(context.Background(), executor.Call{Args: args, Timeout: 10 * time.Second, MaxOutput: 64 << 10}); err != nil {
			t.Fatal(err)
		}
		e.Close()
		time.Sleep(400 * time.Millisecond) // a start still running after Close would be done by now
		left += len(helperChildren(t))
		for _, pid := range helperChildren(t) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Kill()
			}
		}
	}
	if left > 0 {
		t.Errorf("%d exec helpers were left running after their executor's Close (3 executors, each closed right after a call)", left)
	}
}

// helperChildren are this process's children that are exec helpers.
func helperChildren(t *testing.T) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	me := strconv.Itoa(os.Getpid())
	var out []int
	for _, ent := range ents {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so read after its last ')'
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != me {
			continue
		}
		if cmd, err := os.ReadFile(filepath.Join("/proc", ent.Name(), "cmdline")); err == nil && bytes.Contains(cmd, []byte(helper.Arg)) {
			out = append(out, pid)
		}
	}
	return out
}
