package e2e

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	allowlistscheme "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// runBin runs the built binary and returns stdout, stderr and the exit code.
func runBin(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runCmd(t, exec.Command(binPath, args...))
}

func runCmd(t *testing.T, cmd *exec.Cmd) (string, string, int) {
	t.Helper()
	var out, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return out.String(), stderr.String(), code
}

func outcomes(rep *harness.Report) map[harness.Outcome][]string {
	m := map[harness.Outcome][]string{}
	for _, r := range rep.Results {
		m[r.Outcome] = append(m[r.Outcome], r.ID)
	}
	for _, v := range m {
		sort.Strings(v)
	}
	return m
}

// The acceptance run: verify on the built-in policy passes, and every scenario that policy can
// express is contained, each decided by detectors that reported no breach.
func TestVerifyDefaultPolicy(t *testing.T) {
	out, stderr, code := runBin(t, "verify", "--default", "--json", "--max-timeout", "3s")
	var rep struct {
		Pass    bool
		Reasons []string
		Audit   []map[string]any
		Host    []map[string]any
		Harness *harness.Report
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("verify --json: %v\n%s\n%s", err, out, stderr)
	}
	if code != 0 || !rep.Pass || len(rep.Audit) != 0 {
		t.Fatalf("verify failed (exit %d): %v; audit %v", code, rep.Reasons, rep.Audit)
	}
	o := outcomes(rep.Harness)
	if len(o[harness.Breach])+len(o[harness.Error]) != 0 {
		t.Fatalf("breaches %v, errors %v", o[harness.Breach], o[harness.Error])
	}
	for _, id := range []string{"read-ssh-key-absolute", "read-canary-dotdot", "write-outside-sort", "symlink-planted",
		"git-hooks-argv", "planted-binary", "shell-metacharacters", "argument-injection", "sleep-past-timeout",
		"output-flood-file", "concurrent-long-calls", "extra-tool-arguments", "compress-program"} {
		if !slices.Contains(o[harness.Contained], id) {
			t.Errorf("%s not contained: %v", id, o)
		}
	}
	for _, r := range rep.Harness.Results {
		if r.Outcome == harness.Contained && len(r.Findings) == 0 {
			t.Errorf("%s contained with no detector's word", r.ID)
		}
		if r.Outcome == harness.NotApplicable && r.Reason == "" {
			t.Errorf("%s n/a without a reason", r.ID)
		}
	}
	if len(rep.Host) < 5 {
		t.Errorf("host doctor reported %d checks", len(rep.Host))
	}
}

// Every detector reports BREACH under its negative control, and --controls exits 0 only then.
func TestHarnessControls(t *testing.T) {
	out, stderr, code := runBin(t, "harness", "--controls", "--json")
	var rs []harness.ControlResult
	if err := json.Unmarshal([]byte(out), &rs); err != nil {
		t.Fatalf("controls --json: %v\n%s", err, out)
	}
	fired := map[string]bool{}
	for _, r := range rs {
		if !r.Fired {
			t.Errorf("detector %s silent under its control (%s: %s): %s %s", r.Detector, r.Kind, r.Weakness, r.Outcome, r.Detail)
		}
		fired[r.Detector] = fired[r.Detector] || r.Fired
	}
	for _, d := range harness.DetectorNames() {
		if harness.SessionDetector(d) {
			continue // sessions of one serve: the docker scheme's controls (TestHarnessDockerSessionControls)
		}
		if !fired[d] {
			t.Errorf("no control fired detector %s", d)
		}
	}
	if code != 0 || !strings.Contains(stderr, "controls fired") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

// With an interpreter allowlisted, the kernel layers still contain every attack they can, and the
// harness reports exactly the breaches an interpreter makes possible, with exit status 1.
func TestHarnessInterpreterPolicy(t *testing.T) {
	p, err := allowlistscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "policy.toml")
	b, _ := policy.Marshal(p)
	write(t, file, string(b), 0o644)
	junit := filepath.Join(dir, "report.xml")
	out, stderr, code := runBin(t, "harness", "--policy", file, "--json", "--junit", junit, "--max-timeout", "3s")
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json: %v\n%s\n%s", err, out, stderr)
	}
	o := interpreterOutcomes(t, &rep, code)
	var suite struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
	}
	raw, err := os.ReadFile(junit)
	if err != nil || xml.Unmarshal(raw, &suite) != nil || suite.Failures != len(o[harness.Breach]) || suite.Tests != len(rep.Results) {
		t.Errorf("junit report: %v %+v", err, suite)
	}
	// The human table: no colour when not a terminal, one summary line.
	out, _, _ = runBin(t, "harness", "--policy", file, "-s", "planted-script-interpreter,tcp-exfil-loopback")
	if strings.Contains(out, "\x1b[") || !strings.Contains(out, "1 contained, 1 breached, 0 errors, 0 n/a") {
		t.Errorf("table:\n%s", out)
	}
	// verify fails it twice over: the audit's MS101 and the breaches.
	out, _, code = runBin(t, "verify", "--policy", file, "--no-harness")
	if code != 1 || !strings.Contains(out, "MS101") || !strings.Contains(out, "FAIL") {
		t.Errorf("verify exit %d:\n%s", code, out)
	}
}

// interpreterOutcomes checks a harness report on the interpreter policy and returns its
// outcomes.
func interpreterOutcomes(t *testing.T, rep *harness.Report, code int) map[harness.Outcome][]string {
	t.Helper()
	o := outcomes(rep)
	// An interpreter runs what is in the workspace (explain says so), and any installed program
	// through the ELF loader (ld.so PROGRAM: Landlock must let the kernel execute the loader for
	// the pinned binary; atk40 F1): the known limits of allowlisting one. What it creates that
	// the host runs later (a hook, a shell rc file, a systemd user unit) and the host-made hard
	// link it opens are contained by the transactional workspace (the commit refuses the first;
	// the layer hides the link), and a program from a memfd by the memfd_create rule.
	got := slices.Sorted(slices.Values(o[harness.Breach]))
	if want := []string{"loader-exec", "planted-script-interpreter"}; !slices.Equal(got, want) {
		t.Errorf("breaches %v, want exactly %v", got, want)
	}
	// Only the egress-* scenarios (they need a network host list, which this policy has not) and
	// disguised-survivor and the session-* scenarios (a container's cgroup, sessions of one
	// server: docker only) may be n/a, and the wrap-* scenarios (a wrapped server's tools: the
	// wrap scheme only).
	na := slices.DeleteFunc(slices.Clone(o[harness.NotApplicable]), func(id string) bool {
		return strings.HasPrefix(id, "egress-") || id == "disguised-survivor" || strings.HasPrefix(id, "session-") || strings.HasPrefix(id, "wrap-")
	})
	if len(o[harness.Error])+len(na) != 0 {
		t.Errorf("errors %v, n/a %v", o[harness.Error], o[harness.NotApplicable])
	}
	if code != 1 {
		t.Errorf("exit %d with breaches, want 1", code)
	}
	return o
}

// The same attacks on a serve that is not root, as a client a user runs starts it: its calls
// start directly too, each in a user namespace its child clones (README, item 3), and the
// harness, run as uid 65534, must find the same outcomes.
func TestHarnessInterpreterPolicyUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("not root: TestHarnessInterpreterPolicy already attacks a serve that is not root")
	}
	p, err := allowlistscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("/var/tmp", "mcpsandbox-e2e-harness-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	file := filepath.Join(dir, "policy.toml")
	b, _ := policy.Marshal(p)
	write(t, file, string(b), 0o644)
	for _, f := range []string{dir, file} {
		if err := os.Chown(f, 65534, 65534); err != nil {
			t.Fatal(err)
		}
	}
	os.Chmod(dir, 0o755)
	cmd := exec.Command(binPath, "harness", "--policy", file, "--json", "--max-timeout", "3s", "--parallel", "2")
	cmd.Env = []string{"HOME=" + dir, "TMPDIR=" + dir, "PATH=/usr/bin:/bin", "XDG_CONFIG_HOME=" + dir + "/.config", "XDG_STATE_HOME=" + dir + "/.state", "XDG_CACHE_HOME=" + dir + "/.cache"}
	cmd.Dir = dir
	cmd.SysProcAttr = asUserAttr(65534, 65534)
	out, stderr, code := runCmd(t, cmd)
	var rep harness.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("harness --json as uid 65534: %v\n%s\n%s", err, out, stderr)
	}
	o := interpreterOutcomes(t, &rep, code)
	t.Logf("as uid 65534: %d contained, breaches %v", len(o[harness.Contained]), o[harness.Breach])
}

func TestExplain(t *testing.T) {
	out, stderr, code := runBin(t, "explain", "--default", "--json")
	var v struct {
		Threats []struct {
			Threat, Status string
			By             []string
		}
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || code != 0 {
		t.Fatalf("explain: %v (exit %d)\n%s%s", err, code, out, stderr)
	}
	got := map[string]string{}
	for _, th := range v.Threats {
		got[th.Threat] = th.Status
	}
	if got["hog the CPU"] != "NOT enforced" {
		t.Errorf("CPU hogging reported as %q: the allowlist scheme has no cgroups", got["hog the CPU"])
	}
	if got["run a program that is not pinned"] != "enforced" {
		t.Errorf("pinning: %q", got["run a program that is not pinned"])
	}
}

// A server that dies during a scenario is an ERROR, never a BREACH (responsive once counted a
// crashed server as one). The server is the real serve behind a wrapper that SIGKILLs it 1.5s
// into the run, during sleep-past-timeout's call. Controls: the same run without the kill is
// CONTAINED, and a server alive but stopped (SIGSTOP, the responsive control) is a BREACH.
func TestHarnessCrashIsError(t *testing.T) {
	p, err := allowlistscheme.Scheme.ControlPolicy()
	if err != nil {
		t.Fatal(err)
	}
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	scs, err := harness.Select(all, []string{"sleep-past-timeout"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	crasher := filepath.Join(t.TempDir(), "crashing-serve")
	write(t, crasher, "#!/bin/sh\n"+binPath+" \"$@\" &\npid=$!\nsleep 1.5\nkill -9 $pid\n", 0o755)
	run := func(bin string) harness.Result {
		rep, err := harness.Run(context.Background(), scs, harness.Options{Binary: bin, Policy: p, Adapter: allowlistscheme.Scheme.Adapter})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Results[0]
	}
	if r := run(crasher); r.Outcome != harness.Error {
		t.Errorf("a crashed server was judged %s, want ERROR: %s %+v", r.Outcome, r.Reason, r.Findings)
	}
	if r := run(binPath); r.Outcome != harness.Contained {
		t.Errorf("control: the same run without the crash was %s: %s %+v", r.Outcome, r.Reason, r.Findings)
	}
}
