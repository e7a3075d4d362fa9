package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const httpToken = "e2e-token-0123456789abcdef"

var urlLine = regexp.MustCompile(`url=(http://\S+/mcp)`)

// startHTTPServe runs the built binary with --http on a free loopback port and returns its URL.
func startHTTPServe(t *testing.T, f *fixture, extra ...string) (string, *exec.Cmd, chan error) {
	t.Helper()
	url, cmd, exited, _ := startHTTPServeWith(t, append([]string{"--policy", f.policyPath}, extra...), "HOME="+f.home)
	return url, cmd, exited
}

// startHTTPServeWith runs `serve ARGS --http 127.0.0.1:0` with the bearer token and env added to
// this environment, and returns its URL, the process, its exit and its log.
func startHTTPServeWith(t *testing.T, args []string, env ...string) (string, *exec.Cmd, chan error, *lockedBuffer) {
	t.Helper()
	args = append(append([]string{"serve"}, args...), "--http", "127.0.0.1:0")
	cmd := exec.Command(binPath, args...)
	cmd.Env = append(append(os.Environ(), "MCPSANDBOX_TOKEN="+httpToken), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		err := <-exited
		exited <- err
	})
	urlc := make(chan string, 1)
	logs := &lockedBuffer{}
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			logs.Write([]byte(sc.Text() + "\n"))
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				urlc <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve --http stderr:\n%s", logs.String())
		}
	})
	select {
	case u := <-urlc:
		if strings.Contains(logs.String(), httpToken) {
			t.Fatal("serve logged the bearer token")
		}
		return u, cmd, exited, logs
	case <-time.After(20 * time.Second):
		t.Fatalf("serve --http printed no URL: %s", logs.String())
	}
	return "", nil, nil, nil
}

// TestHTTPTypeScriptClient: the official TypeScript SDK client talks to serve over streamable
// HTTP with a bearer token; a request without the token is refused.
func TestHTTPTypeScriptClient(t *testing.T) {
	if _, err := os.Stat("node/node_modules/@modelcontextprotocol/sdk"); err != nil {
		testenv.Skip(t, "the TypeScript SDK is not installed: run `npm ci --prefix e2e/node` (make test does)") // fails under CI=true
	}
	f := newFixture(t, nil)
	url, _, _ := startHTTPServe(t, f)
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("no token: HTTP %d, want 401", resp.StatusCode)
	}
	abs, _ := filepath.Abs("node/client_http.mjs")
	cmd := exec.Command("node", abs, url, httpToken)
	cmd.Dir = "node"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ts http client: %v\n%s", err, out)
	}
	var got struct {
		Server    struct{ Name string }
		SessionID string
		Tools     []struct {
			Name            string
			HasOutputSchema bool
		}
		OK struct {
			IsError    bool
			Structured struct {
				ExitCode int    `json:"exit_code"`
				Stdout   string `json:"stdout"`
			}
		}
		Refused struct {
			IsError bool
			Text    string
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("ts client output %q: %v", out, err)
	}
	if got.Server.Name != "e2e" || got.SessionID == "" || len(got.Tools) != 4 || !got.Tools[0].HasOutputSchema {
		t.Errorf("initialize/tools over HTTP: %+v", got)
	}
	if got.OK.IsError || strings.TrimSpace(got.OK.Structured.Stdout) != "4 notes.txt" {
		t.Errorf("allowed call over HTTP: %+v", got.OK)
	}
	if !got.Refused.IsError || !strings.Contains(got.Refused.Text, "allowlist.workspace") {
		t.Errorf("refused call over HTTP: %+v", got.Refused)
	}
	b, _ := os.ReadFile(f.auditPath)
	if !strings.Contains(string(b), `"session":"`+got.SessionID+`"`) {
		t.Errorf("the audit log does not record the HTTP session %s", got.SessionID)
	}
}

type bearerRT struct{ next http.RoundTripper }

func (b bearerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+httpToken)
	return b.next.RoundTrip(r)
}

// SIGTERM while a call runs: serve stops within its grace period and the call's whole process
// tree is gone (judged by the tag scan of /proc, outside the sandbox).
func TestHTTPShutdownLeavesNothing(t *testing.T) {
	f := newFixture(t, func(p *policy.Policy, _ *fixture) { p.Limits.Timeout.Duration = time.Minute })
	url, cmd, exited := startHTTPServe(t, f)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-http"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT{http.DefaultTransport}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	go cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_allowed_command",
		Arguments: map[string]any{"command": "python3", "args": []string{"-c", "import os,time\nif os.fork()==0: os.setsid(); time.sleep(600)\ntime.sleep(600)", f.tag}}})
	deadline := time.Now().Add(15 * time.Second)
	for len(procsWith(f.tag)) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the call never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		exited <- err // for the cleanup
		if err != nil {
			t.Errorf("serve exited with %v after SIGTERM", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop within 20s of SIGTERM")
	}
	if s := survivors(f.tag); len(s) > 0 {
		t.Fatalf("processes survived serve's shutdown: %v", s)
	}
}
