package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	e2b "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/sandbox"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The key's variable deliberately does not look secret (the audit log's own redactor keys on
// names like *KEY*): what keeps the key out of every output here is the e2b scheme itself.
const (
	e2bKeyEnv = "MCPSB_E2B_APIK"
	e2bKey    = "e2b_e2ekey0c0ffee0c0ffee0c0ffee0c0ffee0c0ff"
)

type e2bFixture struct {
	t         testing.TB
	fake      *e2bfake.Server
	pol       *policy.Policy
	polPath   string
	auditPath string
	cmd       *exec.Cmd
	stderr    *lockedBuffer
	cs        *mcp.ClientSession
}

func newE2BFixture(t testing.TB, mutate func(*policy.Policy)) *e2bFixture {
	t.Helper()
	return newE2BFixtureOpts(t, e2bfake.Options{APIKey: e2bKey}, mutate)
}

func newE2BFixtureOpts(t testing.TB, o e2bfake.Options, mutate func(*policy.Policy)) *e2bFixture {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server runs on Linux only")
	}
	fake, err := e2bfake.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	f := &e2bFixture{t: t, fake: fake}
	root := t.TempDir()
	p := policy.Default(e2bsec.Name)
	p.Name = "e2e-e2b"
	e2bsec.Of(p).APIKeyEnv = e2bKeyEnv
	e2bsec.Of(p).Reuse = "call"
	p.Limits.Timeout.Duration = 3 * time.Second
	f.auditPath = filepath.Join(root, "audit.jsonl")
	p.Audit.Path = f.auditPath
	if mutate != nil {
		mutate(p)
	}
	f.pol = p
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	f.polPath = filepath.Join(root, "policy.toml")
	write(t, f.polPath, string(b), 0o644)
	f.start(e2bKey)
	return f
}

// start runs the built binary's serve on the policy, pointed at the local E2B server.
func (f *e2bFixture) start(key string) {
	t := f.t
	t.Helper()
	cmd := exec.Command(binPath, "serve", "--policy", f.polPath, "--log-level", "debug")
	cmd.Env = append(os.Environ(), e2bKeyEnv+"="+key,
		"E2B_API_URL="+f.fake.URL(), "E2B_SANDBOX_URL="+f.fake.URL(), "E2B_DOMAIN="+f.fake.Domain())
	f.stderr = &lockedBuffer{}
	cmd.Stderr = f.stderr
	stderr := f.stderr
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", stderr.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	f.cmd, f.cs = cmd, cs
	t.Cleanup(func() { cs.Close() })
}

func (f *e2bFixture) call(tool string, args map[string]any) (*mcp.CallToolResult, executor.Result) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		f.t.Fatalf("tools/call %s: %v", tool, err)
	}
	var r executor.Result
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &r)
	}
	return res, r
}

// settle waits (bounded) until the fake holds n sandboxes and, when n is 0, no processes.
func (f *e2bFixture) settle(n int) {
	f.t.Helper()
	ok := eventually(func() bool { return f.fake.Count() == n && (n > 0 || f.fake.Stats().LiveProcs == 0) })
	if !ok {
		f.t.Fatalf("want %d live sandboxes, have %d (%+v)", n, f.fake.Count(), f.fake.Stats())
	}
}

// noKey checks every output serve produced: its log, its audit log.
func (f *e2bFixture) noKey(extra ...string) {
	f.t.Helper()
	a, _ := os.ReadFile(f.auditPath)
	for name, s := range map[string]string{"serve's log": f.stderr.String(), "the audit log": string(a), "results": strings.Join(extra, "\n")} {
		if strings.Contains(s, e2bKey) || strings.Contains(s, e2bKey[8:24]) {
			f.t.Errorf("the E2B key appears in %s", name)
		}
	}
}

func TestE2BOverStdio(t *testing.T) {
	f := newE2BFixture(t, nil)
	tools, err := f.cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 2 || tools.Tools[0].Name != "run_code" || tools.Tools[1].Name != "run_command" {
		t.Fatalf("tools: %+v %v", tools, err)
	}
	var texts []string
	res, r := f.call("run_command", map[string]any{"command": "echo hi; echo no >&2; exit 4"})
	texts = append(texts, text(res))
	if res.IsError || r.ExitCode != 4 || r.Stdout != "hi\n" || r.Stderr != "no\n" {
		t.Fatalf("run_command: %s %+v", text(res), r)
	}
	f.settle(0) // reuse = call: killed after the call
	res, r = f.call("run_code", map[string]any{"code": "import os\nprint(sorted(k for k in os.environ if 'APIK' in k))\n2**10"})
	texts = append(texts, text(res))
	if res.IsError || r.Stdout != "[]\n1024\n" {
		t.Fatalf("run_code: %s %+v", text(res), r)
	}
	res, _ = f.call("run_code", map[string]any{"code": "raise ValueError('bad input 42')"})
	texts = append(texts, text(res))
	if !res.IsError || !strings.Contains(text(res), "ValueError: bad input 42") || !strings.Contains(text(res), "Traceback") {
		t.Fatalf("an exception must be isError with name, value and traceback: %s", text(res))
	}
	start := time.Now()
	res, r = f.call("run_command", map[string]any{"command": "sleep 60"})
	texts = append(texts, text(res))
	if res.IsError || !r.TimedOut || time.Since(start) > 30*time.Second {
		t.Fatalf("limits.timeout must end the call: %s %+v", text(res), r)
	}
	f.settle(0)
	st := f.fake.Stats()
	if st.Created != 4 || st.Killed != 4 {
		t.Fatalf("every call's sandbox killed: %+v", st)
	}
	f.cs.Close() // waits for serve to exit
	f.noKey(texts...)
	// The audit log recorded the calls, the exception as an error.
	a, _ := os.ReadFile(f.auditPath)
	if n := strings.Count(string(a), "\n"); n != 8 || !strings.Contains(string(a), "ValueError") { // "started" and outcome per call
		t.Fatalf("audit log (%d lines):\n%s", n, a)
	}
}

func TestE2BSessionReuseAndRestart(t *testing.T) {
	f := newE2BFixture(t, func(p *policy.Policy) { e2bsec.Of(p).Reuse = "session" })
	f.call("run_command", map[string]any{"command": "echo state > f"})
	res, r := f.call("run_command", map[string]any{"command": "cat f"})
	if res.IsError || r.Stdout != "state\n" {
		t.Fatalf("the session's second call must reuse its sandbox: %s", text(res))
	}
	f.settle(1)
	// The client goes away: the session ends and its sandbox is killed.
	f.cs.Close() // waits for serve to exit
	f.settle(0)

	// SIGKILL: serve cannot clean up, its undertaker does, within seconds.
	f.start(e2bKey)
	f.call("run_command", map[string]any{"command": "true"})
	f.settle(1)
	f.cmd.Process.Kill()
	f.cs.Close()
	killed := time.Now()
	for f.fake.Count() != 0 {
		if time.Since(killed) > 3*time.Second {
			t.Fatal("the sandbox of a SIGKILLed serve still lives 3s later: its undertaker did not kill it")
		}
		time.Sleep(20 * time.Millisecond)
	}

	// SIGKILL of serve and its undertaker (a kill of the whole cgroup): the next serve on this
	// host kills what they left.
	f.start(e2bKey)
	f.call("run_command", map[string]any{"command": "true"})
	f.settle(1)
	under := undertakers(f.cmd.Process.Pid)
	if len(under) != 1 {
		t.Fatalf("want serve's one undertaker process, found %v", under)
	}
	if up, err := os.FindProcess(under[0]); err == nil {
		up.Kill()
	}
	f.cmd.Process.Kill()
	f.cs.Close()
	time.Sleep(500 * time.Millisecond)
	if f.fake.Count() != 1 {
		t.Fatal("negative control: after SIGKILL of serve and its undertaker the sandbox should still be there")
	}
	f.start(e2bKey)
	f.settle(0)

	// SIGTERM: serve shuts down and kills the session's sandbox on its way out.
	f.call("run_command", map[string]any{"command": "true"})
	f.settle(1)
	f.cmd.Process.Signal(syscall.SIGTERM)
	f.settle(0)
	f.cs.Close()
	f.noKey()
}

func TestE2BBadKeyAndUnreachable(t *testing.T) {
	f := newE2BFixture(t, nil)
	f.cs.Close() // waits for serve to exit
	wrong := "e2b_wrong0key0wrong0key0wrong0key0wrong0k"
	f.start(wrong)
	res, _ := f.call("run_command", map[string]any{"command": "true"})
	if !res.IsError || !strings.Contains(text(res), "$"+e2bKeyEnv) || strings.Contains(text(res), wrong) {
		t.Fatalf("a bad key: isError naming the variable, never the key: %s", text(res))
	}
	f.cs.Close() // waits for serve to exit
	if strings.Contains(f.stderr.String(), wrong) {
		t.Fatal("the wrong key appears in serve's log")
	}

	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := ln.Addr().String()
	ln.Close()
	g := newE2BFixture(t, func(p *policy.Policy) {
		e2bsec.Of(p).APIURL = "http://" + dead
		p.Limits.Timeout.Duration = 3 * time.Second
	})
	start := time.Now()
	res, _ = g.call("run_code", map[string]any{"code": "1"})
	if !res.IsError || !strings.Contains(text(res), "cannot reach the E2B API") || time.Since(start) > 20*time.Second {
		t.Fatalf("unreachable API: %s", text(res))
	}
}

// BenchmarkE2BProxyOverhead: a run_command through serve (MCP over stdio, reuse = session)
// against the local E2B server, vs the same command sent straight to it by the Go client.
// The difference per call is what the proxy adds (target ≤ 2 ms). The server runs in Echo mode
// (answers without starting a process) so process start-up (30-90 ms on a loaded host) does
// not drown the difference.
func BenchmarkE2BProxyOverhead(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		fake, err := e2bfake.New(e2bfake.Options{APIKey: e2bKey, Echo: true})
		if err != nil {
			b.Fatal(err)
		}
		defer fake.Close()
		c := e2b.NewClient(e2b.Config{APIKey: e2bKey, APIURL: fake.URL(), SandboxURL: fake.URL()})
		sb, err := c.Create(context.Background(), e2b.CreateOptions{Template: "base", Timeout: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			var out, errb bytes.Buffer
			r, err := c.RunCommand(ctx, sb, "true", &out, &errb)
			cancel()
			if err != nil || r.ExitCode != 0 || out.String() != "true" {
				b.Fatal(r, err)
			}
		}
	})
	b.Run("proxy", func(b *testing.B) {
		f := newE2BFixtureOpts(b, e2bfake.Options{APIKey: e2bKey, Echo: true},
			func(p *policy.Policy) { e2bsec.Of(p).Reuse = "session"; p.Limits.Timeout.Duration = 30 * time.Second })
		f.call("run_command", map[string]any{"command": "true"}) // create the session's sandbox
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			res, r := f.call("run_command", map[string]any{"command": "true"})
			if res.IsError || r.ExitCode != 0 || r.Stdout != "true" {
				b.Fatal(text(res))
			}
		}
	})
}

// TestE2BHarnessOffline: `harness` attacks an e2b policy offline, against the local E2B server it
// starts itself. Host-side detectors cannot see a remote microVM, so their scenarios are N/A
// ("isolation delegated to E2B"), never contained; serve's own promises are judged for real.
func TestE2BHarnessOffline(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server runs on Linux only")
	}
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "call"
	p.Limits.Timeout.Duration = 4 * time.Second
	b, _ := policy.Marshal(p)
	path := filepath.Join(t.TempDir(), "e2b.toml")
	write(t, path, string(b), 0o644)
	cmd := exec.Command(binPath, "harness", "--policy", path, "--json")
	cmd.Env = append(os.Environ(), "E2B_API_KEY=", "MCPSANDBOX_E2B_LIVE=")
	out, stderr, code := runCmd(t, cmd)
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
	}
	got := outcomes(&rep)
	// server-killed-mid-call: a SIGKILLed serve's undertaker kills its sandbox at once (#22).
	for _, id := range []string{"cpu-spin-past-timeout", "output-flood-python", "setsid-survivor", "grandchild-holds-stdout", "fake-jsonrpc-on-fds", "server-killed-mid-call"} {
		if !slices.Contains(got[harness.Contained], id) {
			t.Errorf("%s: want CONTAINED (serve's own promise), outcomes %v", id, got)
		}
	}
	if len(got[harness.Breach]) > 0 || code != 0 {
		t.Errorf("exit %d with breaches %v", code, got[harness.Breach])
	}
	for _, r := range rep.Results {
		// Not contained by accident: the spin really ran until limits.timeout ended it.
		if r.ID == "cpu-spin-past-timeout" && r.DurationMS < p.Limits.Timeout.Milliseconds() {
			t.Errorf("cpu-spin-past-timeout took %d ms: the spin did not run until the %s timeout", r.DurationMS, p.Limits.Timeout)
		}
		if r.ID == "read-ssh-key-absolute" && (r.Outcome != harness.NotApplicable || !strings.Contains(r.Reason, "delegated to E2B")) {
			t.Errorf("a host-side scenario must be N/A (isolation delegated to E2B) for e2b, got %s %q", r.Outcome, r.Reason)
		}
	}
	cmd = exec.Command(binPath, "harness", "--controls", "--scheme", "e2b")
	cmd.Env = append(os.Environ(), "E2B_API_KEY=", "MCPSANDBOX_E2B_LIVE=")
	if out, stderr, code := runCmd(t, cmd); code != 0 || !strings.Contains(out, "every detector can report a breach") {
		t.Fatalf("e2b negative controls (exit %d):\n%s\n%s", code, out, stderr)
	}
}

// undertakers lists the undertaker processes serve (pid) started.
func undertakers(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		cmd, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if len(f) > 1 && f[1] == strconv.Itoa(pid) && strings.Contains(string(cmd), "e2b-undertaker") {
			p, _ := strconv.Atoi(e.Name())
			out = append(out, p)
		}
	}
	return out
}
