package e2e

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/engine"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// docker.reuse = "session" through the real binary over streamable HTTP, where one serve holds
// several MCP sessions: state within a session, none across; a session that made no call holds
// no container; docker.max_sessions refuses a third session naming the key while the others'
// calls ended under 30 s ago, and serves it once the least recently used one's keep passed; a session the client ends (HTTP DELETE) loses its container while the
// other keeps its own; a SIGKILLed serve leaves no session container once the next serve started.
func TestDockerSessionsOverHTTP(t *testing.T) {
	eng := needDocker(t)
	path := dockerPolicy(t, func(p *policy.Policy) {
		dksec.Of(p).Reuse, dksec.Of(p).MaxSessions = "session", 2
		p.Limits.Timeout = policy.Duration{Duration: 20 * time.Second}
	})
	url, cmd, exited, _ := startHTTPServeWith(t, []string{"--policy", path, "--log-level", "debug"})
	connect := func() *mcp.ClientSession {
		t.Helper()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-session"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{http.DefaultTransport}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	run := func(cs *mcp.ClientSession, tool string, args map[string]any) (string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		res, r, err := callDocker(ctx, cs, tool, args)
		if err != nil {
			t.Fatalf("%s %v: %v", tool, args, err)
		}
		if res.IsError {
			return "", resultText(res)
		}
		return r.Stdout, r.Stderr
	}
	a, b := connect(), connect()
	run(a, sd.ToolPython, map[string]any{"code": "x = 41"})
	if out, errs := run(a, sd.ToolPython, map[string]any{"code": "print(x + 1)"}); out != "42\n" {
		t.Fatalf("x = 41 then print(x + 1) in one session: %q %q", out, errs)
	}
	run(b, sd.ToolShell, map[string]any{"script": "echo b > /tmp/b.txt"})
	bUsed := time.Now()
	if out, errs := run(b, sd.ToolPython, map[string]any{"code": "print('x' in globals())"}); out != "False\n" {
		t.Errorf("a second session sees x: %q %q", out, errs)
	}
	if out, _ := run(a, sd.ToolShell, map[string]any{"script": "cat /tmp/b.txt 2>/dev/null || echo none"}); out != "none\n" {
		t.Errorf("session A reads B's /tmp file: %q", out)
	}
	mine := fmt.Sprintf("%s=%d", sd.LabelPID, cmd.Process.Pid)
	sessionBoxes := func() int { return countRunning(t, eng, mine) }
	if n := sessionBoxes(); n != 2 {
		t.Errorf("%d session containers running, want 2", n)
	}
	// A third session that made no call holds no container (an Inspector's tools/list).
	c := connect()
	if _, err := c.ListTools(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	if n := sessionBoxes(); n != 2 {
		t.Errorf("%d session containers running after a third session listed tools, want 2 (a container starts at a session's first call)", n)
	}
	// Its call past max_sessions = 2 while A's and B's calls ended under 30 s ago: refused at
	// once naming the key and when to try again, A and B keep their state (trial40 F5).
	if _, errs := run(c, sd.ToolShell, map[string]any{"script": "echo ran"}); !strings.Contains(errs, "docker.max_sessions") || !strings.Contains(errs, "try again in") {
		t.Errorf("a third session past max_sessions = 2, both others used just now: %q, want refused naming docker.max_sessions", errs)
	}
	if out, errs := run(a, sd.ToolPython, map[string]any{"code": "print(x)"}); out != "41\n" {
		t.Errorf("session A after the refused newcomer: %q %q", out, errs)
	}
	// Once B, the least recently used, passes the 30 s keep within the newcomer's wait (20 s):
	// served, B's container giving way (atk34 F1), never more than 2 running.
	time.Sleep(time.Until(bUsed.Add(25 * time.Second)))
	if out, errs := run(c, sd.ToolShell, map[string]any{"script": "echo ran"}); out != "ran\n" {
		t.Errorf("a third session past max_sessions = 2, B idle for 30 s: %q %q", out, errs)
	}
	if d := time.Since(bUsed); d < 30*time.Second {
		t.Errorf("the third session was served %s after B's last call began, within its 30 s keep", d)
	}
	if n := sessionBoxes(); n != 2 {
		t.Errorf("%d session containers running after the third session's call, want 2", n)
	}
	// B, the least recently used, gave way: its next call is told so and runs in a fresh one
	if out, errs := run(b, sd.ToolShell, map[string]any{"script": "cat /tmp/b.txt 2>/dev/null || echo gone"}); out != "gone\n" || !strings.Contains(errs, "to make room for another session's") {
		t.Errorf("session B after its container gave way: %q %q", out, errs)
	}
	a.Close() // DELETE: the sessions end, their containers go
	b.Close()
	waitFor(t, 20*time.Second, "the ended sessions' containers to go", func() bool { return sessionBoxes() == 1 })
	if out, errs := run(c, sd.ToolShell, map[string]any{"script": "echo ran"}); out != "ran\n" {
		t.Errorf("the third session after the others ended: %q %q", out, errs)
	}

	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	exited <- nil
	// The supervisors see their attach streams close and stop their containers.
	waitFor(t, 20*time.Second, "the killed serve's containers to stop", func() bool { return countRunning(t, eng, mine) == 0 })
	cs2, cmd2 := serveDocker(t, path)
	if _, r, err := callDocker(context.Background(), cs2, sd.ToolShell, map[string]any{"script": "echo again"}); err != nil || r.Stdout != "again\n" {
		t.Fatalf("after restart: %v %+v", err, r)
	}
	if n := countContainers(t, eng, mine); n != 0 {
		t.Errorf("%d containers of the SIGKILLed serve remain after the next serve started", n)
	}
	cs2.Close()
	cmd2.Wait()
}

func countRunning(t *testing.T, eng *engine.Client, label string) int {
	t.Helper()
	cs, err := eng.API.ContainerList(context.Background(), container.ListOptions{Filters: filters.NewArgs(filters.Arg("label", label))})
	if err != nil {
		t.Fatal(err)
	}
	return len(cs)
}

func waitFor(t *testing.T, within time.Duration, what string, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("waited %s for %s", within, what)
		}
	}
}
