package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
)

// A container stopped from outside mid-call (docker stop, or the engine shutting down) used to
// come back as a bare exit 143: the call now says what happened.
func TestStoppedFromOutsideIsSaid(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	done := make(chan struct{})
	var stopped int
	go func() {
		defer close(done)
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			cs, _ := eng.API.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(
				filters.Arg("label", LabelInstance+"="+e.Instance()), filters.Arg("status", "running"))})
			if len(cs) > 0 && programRuns(eng, cs[0].ID, "sleep 20") {
				zero := 0
				if err := eng.API.ContainerStop(context.Background(), cs[0].ID, container.StopOptions{Timeout: &zero, Signal: "SIGTERM"}); err == nil {
					stopped++
				}
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	res, err := call(t, e, "run_shell_sandbox", map[string]any{"script": "sleep 20; echo not stopped"})
	<-done
	if stopped == 0 {
		t.Fatal("the test could not stop the call's container: nothing was attacked")
	}
	if err != nil {
		t.Fatalf("a stopped container is a result with its reason, got error %v", err)
	}
	if res.TimedOut || strings.Contains(res.Stdout, "not stopped") {
		t.Fatalf("the container was not stopped mid-call: %+v", res)
	}
	if !strings.Contains(res.Stderr, "stopped from outside the sandbox") {
		t.Fatalf("exit %d with no word on why: stderr %q", res.ExitCode, res.Stderr)
	}
}

// programRuns says whether the container's process list shows the call's program (stopping the
// container before that would test the start-up path instead).
func programRuns(eng *engine.Client, id, cmdline string) bool {
	top, err := eng.API.ContainerTop(context.Background(), id, nil)
	if err != nil {
		return false
	}
	for _, p := range top.Processes {
		if strings.Contains(strings.Join(p, " "), cmdline) {
			return true
		}
	}
	return false
}

// A call whose container cannot start before the call's hard stop (a loaded engine) ends as
// timed out at the hard stop instead of running past it, and the late container is removed.
func TestSlowStartBoundedByHardStop(t *testing.T) {
	eng := needEngine(t)
	e := newExec(t, eng, testPolicy())
	raw, _ := json.Marshal(map[string]any{"script": "echo ran"})
	// serve's deadline lies so far back that the hard stop (deadline + startGrace) is 20ms
	// away: no container starts that fast.
	ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(20*time.Millisecond-startGrace))
	defer cancel()
	t0 := time.Now()
	res, err := tool(e, "run_shell_sandbox").Run(ctx, executor.Call{Args: raw, Timeout: 3 * time.Second, MaxOutput: 1 << 16})
	took := time.Since(t0)
	if err != nil {
		t.Fatalf("a call that could not start is a timed-out result, got error %v", err)
	}
	if !res.TimedOut || strings.Contains(res.Stdout, "ran") || !strings.Contains(res.Stderr, "did not start within") {
		t.Fatalf("want a timed-out result saying the container did not start: %+v", res)
	}
	if took > time.Second {
		t.Fatalf("the call ran %s past a hard stop 20ms away", took)
	}
	// The late container: Close waits for creates in flight and removes what this serve made.
	e.Close()
	cs, err := eng.API.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelInstance+"="+e.Instance()))})
	if err != nil || len(cs) != 0 {
		t.Fatalf("the container that started late outlived serve: %d left (%v)", len(cs), err)
	}
}
