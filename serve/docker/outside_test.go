package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
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
			if len(cs) > 0 {
				time.Sleep(300 * time.Millisecond) // the program is running
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
