package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// binProcs counts the processes running the test binary (serve and its exec helpers).
func binProcs() int { return len(procsWith(binPath)) }

// settledBinProcs is binProcs once it holds still: a serve forks a short-lived child of its
// own binary after each call (the next call's mount namespace is made in it), which a single
// count may catch (CI counted 2 before and 1 after, both the fixture's serve).
func settledBinProcs() int {
	n := binProcs()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		m := binProcs()
		if m == n {
			return n
		}
		n = m
	}
	return n
}

// sigterm stops serve with SIGTERM and waits (bounded) for it to exit 0.
func sigterm(t *testing.T, cmd *exec.Cmd, exited chan error, within time.Duration) {
	t.Helper()
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(within):
		t.Fatalf("serve did not stop within %s of SIGTERM", within)
	}
}

func httpSession(t *testing.T, url string) *mcp.ClientSession {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "load"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	return cs
}

// TestLoadAndFaultsHTTP: 200 calls at concurrency 32 over 8 HTTP sessions with max_concurrent 4,
// a client that vanishes mid-call, and a flood of malformed requests; then SIGTERM. Every call
// answers correctly, nothing the calls started outlives them, and serve leaves no process.
// Every loop is bounded in count and time, and all traffic stays on loopback.
func TestLoadAndFaultsHTTP(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) {
		p.Limits.MaxConcurrent = 4
		p.Limits.Timeout = policy.Duration{Duration: 8 * time.Second}
	})
	// The fixture's own serve is settled first (a call waits for its layer probe, whose helper
	// process would otherwise be counted before and gone after).
	if r, _ := f.call("wc", "-l", "notes.txt"); r.IsError {
		t.Fatalf("the fixture's serve: %v", r.Content)
	}
	before := settledBinProcs()
	url, cmd, exited := startHTTPServe(t, f)

	const calls, conc, sessions = 200, 32, 8
	css := make([]*mcp.ClientSession, sessions)
	for i := range css {
		css[i] = httpSession(t, url)
	}
	work := make(chan int, calls)
	for i := range calls {
		work <- i
	}
	close(work)
	var failed atomic.Int64
	var firstErr sync.Once
	var wg sync.WaitGroup
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cs := css[g%sessions]
			for range work {
				ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
				r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command",
					Arguments: map[string]any{"command": "wc", "args": []string{"-l", "notes.txt"}}})
				cancel()
				ok := err == nil && !r.IsError && strings.Contains(text(r), "4 notes.txt")
				if !ok {
					failed.Add(1)
					firstErr.Do(func() {
						msg := fmt.Sprint(err)
						if r != nil {
							msg += " " + text(r)
						}
						t.Errorf("a call failed under load: %s", msg)
					})
				}
			}
		}()
	}
	wg.Wait()
	t.Logf("load: %d calls at concurrency %d over %d sessions, %d failed", calls, conc, sessions, failed.Load())

	// Every call is in the audit log, each under one of the 8 sessions.
	b, _ := os.ReadFile(f.auditPath)
	perSession := map[string]int{}
	for sc := bufio.NewScanner(strings.NewReader(string(b))); sc.Scan(); {
		var e struct{ Session, Decision string }
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Decision == "ran" {
			perSession[e.Session]++
		}
	}
	total := 0
	for _, cs := range css {
		total += perSession[cs.ID()]
	}
	if total != calls {
		t.Errorf("the audit log holds %d calls for the load's sessions, want %d", total, calls)
	}

	// A client that disconnects mid-call: its call still ends (at the timeout at the latest)
	// and its process tree with it.
	vanish := httpSession(t, url)
	ctx, cancel := context.WithCancel(context.Background())
	go vanish.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command",
		Arguments: map[string]any{"command": "python3", "args": []string{"-c", "import time; time.sleep(600)", f.tag}}})
	deadline := time.Now().Add(15 * time.Second)
	for len(procsWith(f.tag)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the vanishing client's call never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	deadline = time.Now().Add(8*time.Second + 10*time.Second)
	for len(procsWith(f.tag)) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the disconnected client's call outlived its timeout: %v", procsWith(f.tag))
		}
		time.Sleep(100 * time.Millisecond)
	}

	// A flood of malformed requests: each answered with a client error, the server stays up.
	hc := &http.Client{Transport: bearerRT{http.DefaultTransport}, Timeout: 10 * time.Second}
	bad := []string{"garbage", "{}", "[]", `{"jsonrpc":"2.0","id":1,"method":5}`, "\xff\xfe", strings.Repeat("[", 10000)}
	for i := range 300 {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(bad[i%len(bad)]))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatalf("malformed request %d: the server stopped answering: %v", i, err)
		}
		io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if resp.StatusCode < 400 || resp.StatusCode >= 500 {
			t.Fatalf("malformed request %q: HTTP %d, want a 4xx", bad[i%len(bad)], resp.StatusCode)
		}
	}
	r, err := css[0].CallTool(context.Background(), &mcp.CallToolParams{Name: "run_allowed_command",
		Arguments: map[string]any{"command": "wc", "args": []string{"-l", "notes.txt"}}})
	if err != nil || r.IsError {
		t.Fatalf("a call after the flood: %v", err)
	}
	for _, cs := range css {
		cs.Close()
	}

	sigterm(t, cmd, exited, 20*time.Second)
	deadline = time.Now().Add(5 * time.Second)
	for binProcs() > before && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	after := settledBinProcs()
	t.Logf("processes of the binary: before %d, after %d", before, after)
	if after > before {
		t.Fatalf("processes of the binary: %d before serve --http, %d after it stopped", before, after)
	}
}
