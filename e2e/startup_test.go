package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/generate"
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
		p := policy.Default(policy.SchemeAllowlist)
		p.Allowlist.Workspace = ws
		p.Allowlist.Commands = []policy.Command{cmd}
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
