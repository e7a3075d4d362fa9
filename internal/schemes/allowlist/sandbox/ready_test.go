//go:build linux

package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// The layer probe runs after New returns; when the helper cannot start, Ready says why, and
// calls fail with that reason instead of running unconfined.
func TestReadyReportsAFailedProbe(t *testing.T) {
	p, err := defaultPolicy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{HelperPath: "/bin/false"})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer e.Close()
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("Ready = %v", err)
	}
	_, err = e.Tools()[0].Run(context.Background(), executor.Call{Args: json.RawMessage(`{"command":"wc","args":[]}`)})
	if err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("call ran without a working helper: %v", err)
	}
	for _, l := range e.Layers() {
		if l.Name == "seccomp" && l.Active {
			t.Error("seccomp reported in force without a probe")
		}
	}
}

// A deferred probe (Options.DeferProbe) starts only at Begin: serve answers its first requests
// before the probe's helper processes compete with them.
func TestDeferredProbeWaitsForBegin(t *testing.T) {
	p, err := defaultPolicy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(p, Options{HelperPath: "/bin/false", DeferProbe: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	defer e.Close()
	select {
	case <-e.probed:
		t.Fatal("a deferred probe ran before Begin")
	case <-time.After(300 * time.Millisecond):
	}
	e.Begin()
	e.Begin() // a second Begin is a no-op
	select {
	case <-e.probed:
	case <-time.After(30 * time.Second):
		t.Fatal("the probe did not run after Begin")
	}
	if err := e.Ready(); err == nil || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("Ready = %v", err)
	}
}

// What needs the probe starts a deferred one itself: a call, Ready and Layers never wait for a
// Begin that may not come, and a call still fails with the probe's reason instead of running.
func TestDeferredProbeStartedByWhatNeedsIt(t *testing.T) {
	for _, c := range []struct {
		name string
		use  func(e *Executor) error
	}{
		{"call", func(e *Executor) error {
			_, err := e.Tools()[0].Run(context.Background(), executor.Call{Args: json.RawMessage(`{"command":"wc","args":[]}`)})
			return err
		}},
		{"ready", func(e *Executor) error { return e.Ready() }},
		{"layers", func(e *Executor) error { e.Layers(); return e.probeErr }},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := defaultPolicy(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(p, Options{HelperPath: "/bin/false", DeferProbe: true})
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			defer e.Close()
			done := make(chan error, 1)
			go func() { done <- c.use(e) }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), "cannot start") {
					t.Fatalf("%s with a failing probe = %v", c.name, err)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("%s waited for a deferred probe nobody started", c.name)
			}
		})
	}
}

// The commands are pinned side by side (pinAll), yet New reports the first failing command in
// policy order, as a loop would: a disguised interpreter before a missing binary, and after.
func TestPinAllReportsTheFirstFailureInOrder(t *testing.T) {
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	os.Symlink("/bin/sh", filepath.Join(dir, "count"))
	disguised := policy.Command{Name: "count", Path: filepath.Join(dir, "count")}
	missing := policy.Command{Name: "gone", Path: filepath.Join(dir, "gone")}
	wc := policy.Command{Name: "wc", Path: "/usr/bin/wc"}
	for _, c := range []struct {
		cmds []policy.Command
		want string
	}{
		{[]policy.Command{wc, disguised, missing}, `"count"`},
		{[]policy.Command{wc, missing, disguised}, `"gone"`},
	} {
		for range 20 { // the pins race each other: the answer must not
			_, err := pinAll(c.cmds)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("pinAll(%v) = %v, want the failure of %s", c.cmds, err, c.want)
			}
		}
	}
	pcs, err := pinAll([]policy.Command{wc, {Name: "sort", Path: "/usr/bin/sort"}})
	if err != nil || len(pcs) != 2 || pcs[0].Name != "wc" || pcs[1].Name != "sort" {
		t.Fatalf("pinAll = %v, %v", pcs, err)
	}
}
