package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// testImage is the image the tests run: scripts/build-test-image.sh builds it offline.
func testImage() string {
	if s := os.Getenv("MCPSANDBOX_TEST_IMAGE"); s != "" {
		return s
	}
	return "mcpsandbox-test:bookworm"
}

// needEngine returns a client for the engine the environment names, with the test image
// present; without them the test skips loudly, or fails under CI=true.
func needEngine(t testing.TB) *engine.Client {
	t.Helper()
	stop := func(format string, args ...any) { testenv.Skip(t, format, args...) } // fails under CI=true; listed at the end
	eng, err := engine.New()
	if err != nil {
		stop("docker tests: %v", err)
		return nil
	}
	t.Cleanup(func() { eng.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := eng.Version(ctx); err != nil {
		stop("docker tests: no Docker engine answers (%v): start one, or set DOCKER_HOST", err)
		return nil
	}
	if _, ok, err := eng.ImagePresent(ctx, testImage()); err != nil || !ok {
		why := "is missing"
		if err != nil {
			why = fmt.Sprintf("could not be looked up (%v)", err)
		}
		stop("docker tests: the image %s %s: build it with sh scripts/build-test-image.sh, or set MCPSANDBOX_TEST_IMAGE", testImage(), why)
		return nil
	}
	return eng
}

func testPolicy(mut ...func(*policy.Policy)) *policy.Policy {
	p := policy.Default(dksec.Name)
	dksec.Of(p).Image = testImage()
	p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	for _, m := range mut {
		m(p)
	}
	return p
}

// newExec starts an executor on the test engine and closes it at the end of the test.
func newExec(t testing.TB, eng *engine.Client, p *policy.Policy) *Executor {
	t.Helper()
	return newExecOpts(t, p, Options{Engine: eng})
}

// newExecOpts is newExec with options of the test's own.
func newExecOpts(t testing.TB, p *policy.Policy, o Options) *Executor {
	t.Helper()
	e, err := New(p, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if err := e.Ready(); err != nil {
		t.Fatal(err)
	}
	return e
}

func tool(e *Executor, name string) executor.Tool {
	for _, t := range e.Tools() {
		if t.Name == name {
			return t
		}
	}
	panic("no tool " + name)
}

// call runs one tool call the way serve does: the policy's timeout on the context.
func call(t testing.TB, e *Executor, name string, args map[string]any) (*executor.Result, error) {
	t.Helper()
	raw, _ := json.Marshal(args)
	ctx, cancel := context.WithTimeout(context.Background(), e.pol.Limits.Timeout.Duration)
	defer cancel()
	return tool(e, name).Run(ctx, executor.Call{Args: raw, Timeout: e.pol.Limits.Timeout.Duration, MaxOutput: int(e.pol.Limits.MaxOutputBytes)})
}

func mustCall(t testing.TB, e *Executor, name string, args map[string]any) *executor.Result {
	t.Helper()
	res, err := call(t, e, name, args)
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return res
}

// containers lists the engine's containers carrying label (key or key=value), by id.
func containers(t testing.TB, eng *engine.Client, label string) []string {
	t.Helper()
	f := filters.NewArgs()
	if label != "" {
		f.Add("label", label)
	}
	cs, err := eng.API.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}
