// Package e2e drives the built mcpsandbox binary as a subprocess over real stdio, as a client
// does, and checks containment from outside the sandbox.
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// binPath is the mcpsandbox binary built once for the package.
var binPath string

// python is the interpreter allowlisted by the attack tests: a real ELF binary that uid 65534
// can read (a pyenv shim is a script and lives under /root).
const python = "/usr/bin/python3.11"

// TestMain gives the package its own HOME, XDG directories and a PATH without the MCP client
// CLIs (testenv.Setup: the suite passes on a developer's machine with clients installed and a
// real policy in HOME), builds the binary, and at the end lists every test that skipped for a
// missing prerequisite (testenv.ReportSkips), even without -v.
func TestMain(m *testing.M) {
	envRoot, err := testenv.Setup()
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: hermetic test environment: %v\n", err)
		os.Exit(2)
	}
	os.Exit(runE2E(m, envRoot))
}

func runE2E(m *testing.M, envRoot string) int {
	defer os.RemoveAll(envRoot)
	defer testenv.ReportSkips("e2e")
	// The harness and its docker controls read MCPSANDBOX_TEST_IMAGE: set once for the whole
	// binary (as .ci/run exports it), not per test with t.Setenv, which t.Parallel forbids.
	if os.Getenv("MCPSANDBOX_TEST_IMAGE") == "" {
		os.Setenv("MCPSANDBOX_TEST_IMAGE", dockerImage())
	}
	if b := os.Getenv("MCPSANDBOX_TEST_BINARY"); b != "" {
		// make mutants: run the catchers against a prebuilt (mutant) binary.
		binPath = b
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "mcpsandbox-e2e-bin-")
	if err != nil {
		fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		return 2
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	binPath = filepath.Join(dir, "mcpsandbox")
	// a test build (internal/testhooks): the harness's egress stand-ins and its offline E2B server
	build := exec.Command("go", "build", "-tags", "testhooks", "-o", binPath, "../cmd/mcpsandbox")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build mcpsandbox: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// parallel marks one of the slow tests that spend their time waiting on containers, child
// processes, the network or a build (the docker harness runs and controls, the re-run of other
// tests, the npm servers, a go build): they run after the serial tests, two at a time (-parallel
// defaults to GOMAXPROCS), so one waits while the other works (TestDockerHarness's two halves run
// side by side in its own turn). Each uses its own policy, arena,
// temporary dirs and tagged processes and counts only the containers its own serve labelled;
// none calls t.Setenv or changes the process's state. The allowlist harness runs stay serial:
// they keep both CPUs busy on their own (four scenarios at once), and a step the load delays past
// its timeout is an ERROR. A test that looks at the whole host (TestPrivateTmp's /tmp entries)
// stays serial too. MCPSANDBOX_E2E_SERIAL=1 runs them all one by one (to tell a failure of
// overlap from one of the test).
func parallel(t *testing.T) {
	t.Helper()
	if os.Getenv("MCPSANDBOX_E2E_SERIAL") == "" {
		t.Parallel()
	}
}

func randHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// fixture is one live server in a harness.Arena: the same canaries, fake HOME, secret,
// listeners, stub resolver and sibling process the harness scenarios are judged by, so there is
// one way tests stage them. The fields are the arena's, named as the tests use them.
type fixture struct {
	t                     testing.TB
	a                     *harness.Arena
	root, ws, outside     string
	home                  string
	nonce, secret, tag    string
	policyPath, auditPath string
	pol                   *policy.Policy
	cs                    *mcp.ClientSession
	before                harness.OutsideSnapshot
}

// newFixture opens an arena whose workspace the sandboxed uid could reach by plain file
// permissions (so only the sandbox stops it), writes a policy, starts serve and connects a
// go-sdk client over stdio.
func newFixture(t testing.TB, mutate func(*policy.Policy, *fixture)) *fixture {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Log("not root: the server will run commands as this user; some layers may be unavailable")
	}
	a, err := harness.NewArena(nil)
	if err != nil {
		t.Fatalf("harness arena: %v", err)
	}
	t.Cleanup(a.Close)
	f := &fixture{t: t, a: a, root: a.Root, ws: a.WS, outside: a.Outside, home: a.Home,
		nonce: a.Nonce, secret: a.Secret, tag: a.Tag}
	// The arena lives under /var/tmp, not /tmp: each allowlist call gets a private /tmp, which
	// would hide the outside areas and let a read fail by invisibility instead of by Landlock.
	os.Chmod(f.ws, 0o777)
	os.Chmod(filepath.Join(f.ws, "notes.txt"), 0o666)
	if os.Geteuid() == 0 {
		if err := a.ChownWorkspace(65534, 65534); err != nil {
			t.Fatal(err)
		}
	}

	p := policy.Default(alsec.Name)
	p.Name = "e2e"
	p.Limits.Timeout = policy.Duration{Duration: 3 * time.Second}
	alsec.Of(p).Workspace = f.ws
	f.auditPath = a.AuditPath() // beside the arena: the outside detector leaves serve's own files alone
	p.Audit.Path = f.auditPath
	for _, n := range []string{"wc", "sort", "cat", "uniq", python} {
		c, err := generate.Pin(n)
		if err != nil {
			t.Fatalf("pin %s: %v", n, err)
		}
		if n == python {
			c.Name = "python3"
		}
		alsec.Of(p).Commands = append(alsec.Of(p).Commands, c)
	}
	f.pol = p
	if mutate != nil {
		mutate(p, f)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("serve stderr:\n%s", a.ServerStderr())
		}
	})
	if err := a.Start(context.Background(), binPath, p); err != nil {
		t.Fatalf("connect: %v", err)
	}
	f.policyPath, f.cs = a.PolicyPath(), a.Session()
	f.before = a.SnapshotOutside()
	return f
}

// call runs one tool call and decodes its structured result (zero when refused).
func (f *fixture) call(command string, args ...string) (*mcp.CallToolResult, executor.Result) {
	f.t.Helper()
	return f.callCtx(context.Background(), command, args...)
}

func (f *fixture) callCtx(ctx context.Context, command string, args ...string) (*mcp.CallToolResult, executor.Result) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if args == nil {
		args = []string{}
	}
	res, err := f.cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command",
		Arguments: map[string]any{"command": command, "args": args}})
	if err != nil {
		f.t.Fatalf("tools/call %s %q: %v", command, args, err)
	}
	var r executor.Result
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &r); err != nil {
			f.t.Fatalf("structured content: %v", err)
		}
	}
	return res, r
}

// py runs a python snippet; the tag rides in argv so leftover processes can be found in /proc.
func (f *fixture) py(code string) (*mcp.CallToolResult, executor.Result) {
	f.t.Helper()
	return f.call("python3", "-c", code, f.tag)
}

func text(r *mcp.CallToolResult) string { return harness.ResultText(r) }

// --- detectors: each looks from outside the sandbox and each has a control showing it fire ---

// survivors lists processes whose command line carries the tag, waiting up to 3s for them to go.
func survivors(tag string) []string {
	deadline := time.Now().Add(3 * time.Second)
	for {
		found := procsWith(tag)
		if len(found) == 0 || time.Now().After(deadline) {
			return found
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// leaked reports whether any secret the fixture planted appears in s.
func (f *fixture) leaked(s string) bool {
	return strings.Contains(s, f.nonce) || strings.Contains(s, f.secret)
}

// outsideChanged lists what changed outside the workspace since the server started (the
// arena's snapshot: scratch root, fake HOME, tagged files in the shared temporary dirs).
func (f *fixture) outsideChanged() []string { return f.a.ChangedOutside(f.before) }

// rebase takes what is outside the workspace now as the state outsideChanged compares with,
// after the test itself changed something there.
func (f *fixture) rebase() { f.before = f.a.SnapshotOutside() }

// responsive checks the server still answers tools/list promptly.
func (f *fixture) responsive() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := f.cs.ListTools(ctx, nil)
	return err == nil
}

func mkdir(t testing.TB, parent, name string, mode os.FileMode) string {
	p := filepath.Join(parent, name)
	if err := os.Mkdir(p, mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(p, mode)
	return p
}

func write(t testing.TB, path, s string, mode os.FileMode) {
	if err := os.WriteFile(path, []byte(s), mode); err != nil {
		t.Fatal(err)
	}
	os.Chmod(path, mode)
}

func mcpParams(args map[string]any) *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "run_allowed_command", Arguments: args}
}

// securitySkip skips a security test whose prerequisite is missing, loudly (listed at the end of
// the run, even without -v); under CI=true it fails instead: a skipped security test proves
// nothing, and CI must provide what it needs.
func securitySkip(t testing.TB, format string, args ...any) {
	t.Helper()
	testenv.Skip(t, format, args...)
}

// lockedBuffer collects serve's stderr, written by exec's copying goroutine.
type lockedBuffer = testenv.LockedBuffer
