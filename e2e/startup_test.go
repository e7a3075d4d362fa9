package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/serve"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A pinned binary that someone else could replace (its directory is world-writable) stops serve
// at start-up; the control is the same binary in a directory only root may write.
func TestWritableBinaryLocationRefused(t *testing.T) {
	root := t.TempDir()
	ws := mkdir(t, root, "ws", 0o777)
	for _, c := range []struct {
		mode    os.FileMode
		refused bool
	}{{0o777, true}, {0o755, false}} {
		dir := filepath.Join(root, "bin"+c.mode.String())
		os.Mkdir(dir, c.mode)
		os.Chmod(dir, c.mode)
		b, _ := os.ReadFile("/usr/bin/wc")
		write(t, filepath.Join(dir, "wc"), string(b), 0o755)
		cmd, err := generate.Pin(filepath.Join(dir, "wc"))
		if err != nil {
			t.Fatal(err)
		}
		p := policy.Default(alsec.Name)
		alsec.Of(p).Workspace = ws
		alsec.Of(p).Commands = []policy.Command{cmd}
		data, _ := policy.Marshal(p)
		pp := filepath.Join(root, "p"+c.mode.String()+".toml")
		write(t, pp, string(data), 0o644)
		out, err := exec.Command(binPath, "serve", "--policy", pp, "--check").CombinedOutput()
		if c.refused && (err == nil || !strings.Contains(string(out), "world-writable")) {
			t.Errorf("binary in a %v directory: err=%v\n%s", c.mode, err, out)
		}
		if !c.refused && err != nil {
			t.Errorf("control: binary in a %v directory refused: %s", c.mode, out)
		}
	}
}

// serve --check reports the layers measured by starting the helper, which tries what each layer
// forbids. As root on Linux with namespaces, every layer the scheme has must be in force: a
// mutant that switches one off (make mutants) turns this red.
func TestCheckReportsLayers(t *testing.T) {
	f := newFixture(t, nil)
	out, err := exec.Command(binPath, "serve", "--policy", f.policyPath, "--check", "--json").Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderrOf(err))
	}
	active := checkLayers(t, out)
	want := []string{"pinned exec", "seccomp", "no_new_privs", "landlock: filesystem", "network isolation", "rlimits", "private /tmp"}
	if os.Geteuid() == 0 {
		want = append(want, "unprivileged user", "pid namespace", "network namespace", "ipc/uts namespaces",
			"process limit", "protected paths read-only")
	}
	for _, w := range want {
		if !active[w] {
			t.Errorf("layer %q not in force: %s", w, out)
		}
	}
	if active["cpu share"] {
		t.Error("cpu share claimed in force, but the allowlist scheme does not enforce it")
	}
}

// A server that is not root gets its namespaces through a user namespace. Run as root, the test
// starts serve --check as uid 65534 (as itself otherwise).
func TestCheckReportsLayersUnprivileged(t *testing.T) {
	root, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	ws := mkdir(t, root, "ws", 0o755)
	cmd := exec.Command(binPath, "serve", "--default", "--workspace", ws, "--check", "--json")
	cmd.Env = append(os.Environ(), "HOME="+root)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
		cmd.SysProcAttr = asUserAttr(65534, 65534)
	}
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("serve --check as uid 65534: %v: %s", err, stderrOf(err))
	}
	active := checkLayers(t, out)
	for _, w := range []string{"user namespace", "pid namespace", "network namespace", "ipc/uts namespaces", "seccomp",
		"no_new_privs", "landlock: filesystem", "network isolation", "rlimits", "process limit", "private /tmp"} {
		if !active[w] {
			t.Errorf("layer %q not in force for a server that is not root: %s", w, out)
		}
	}
}

func checkLayers(t *testing.T, out []byte) map[string]bool {
	t.Helper()
	var rep struct {
		Layers []struct {
			Name   string
			Active bool
		}
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	active := map[string]bool{}
	for _, l := range rep.Layers {
		active[l.Name] = l.Active
	}
	return active
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// serve's start-up runs no garbage collection on the way to its first answers (serve.QuietStart):
// GODEBUG=gctrace=1 prints a line per collection, and none is printed by the time tools/list is
// answered. The built-in policy's start now allocates less than the runtime's first goal (4 MB),
// so the start here also allocates 16 MB of garbage (testhooks.StartGarbageVar), as a large
// policy's would. The control is the same start with GOGC set (the operator's setting stands,
// so the runtime's 4 MB goal applies): it collects. Red without (mutant quiet-start).
func TestStartCollectsNothing(t *testing.T) {
	f := newFixture(t, nil)
	start := func(env ...string) (gcs []string, took time.Duration) {
		cmd := exec.Command(binPath, "serve", "--policy", f.policyPath, "--log-level", "error")
		cmd.Env = append(append(os.Environ(), "GODEBUG=gctrace=1", testhooks.StartGarbageVar+"=16777216"), env...)
		var stderr lockedBuffer
		cmd.Stderr = &stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer func() { cmd.Process.Kill(); cmd.Wait() }()
		io.WriteString(in, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n")
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() && !strings.Contains(sc.Text(), `"id":2`) {
		}
		took = time.Since(t0)
		time.Sleep(100 * time.Millisecond) // a collection started before the answer prints when it ends
		for _, l := range strings.Split(stderr.String(), "\n") {
			if strings.HasPrefix(l, "gc ") {
				gcs = append(gcs, l)
			}
		}
		return gcs, took
	}
	gcs, took := start()
	if took > serve.StartQuiet/2 {
		t.Skipf("SKIP: the start took %v on this loaded host, too close to serve.StartQuiet (%v) to judge", took, serve.StartQuiet)
	}
	if len(gcs) > 0 {
		t.Errorf("serve collected garbage on the way to its first answers (%v):\n%s", took, strings.Join(gcs, "\n"))
	}
	if ctl, _ := start("GOGC=100"); len(ctl) == 0 {
		t.Errorf("control: with GOGC set serve's start collected nothing, so the test cannot see a collection")
	}
}
