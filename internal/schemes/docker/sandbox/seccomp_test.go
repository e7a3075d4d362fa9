package sandbox

import (
	"context"
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/sysdeny"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// kernelSurfaceProbe is the kernel-surface scenario's docker step (the scheme's own, in
// internal/schemes/docker/scenarios.toml): a static x86-64 program the Python step assembles and runs
// from a memfd (the test image has no ctypes). One probe for the harness and this test.
func kernelSurfaceProbe(t *testing.T) string {
	t.Helper()
	var own map[string]struct {
		Steps []struct {
			Python string `toml:"python"`
		} `toml:"steps"`
	}
	b, err := os.ReadFile("../scenarios.toml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := toml.Decode(string(b), &own); err != nil {
		t.Fatal(err)
	}
	steps := own["kernel-surface"].Steps
	if len(steps) != 1 || steps[0].Python == "" {
		t.Fatalf("internal/schemes/docker/scenarios.toml has no kernel-surface python step: %+v", own["kernel-surface"])
	}
	return steps[0].Python
}

var probeLine = regexp.MustCompile(`(?m)^SYSCALL (\S+) (-?\d+) (\d+)$`)

// TestSeccompProfileDeniesKernelSurface runs the probe under runc and crun: every probed call
// (io_uring_setup, userfaultfd, bpf, keyctl, perf_event_open, init_module, a user namespace,
// a FIFO) must be refused before the kernel sees it, EPERM (or ENOSYS), and the seccomp layer
// must say serve's profile is in force. Under Docker 20.10's default profile io_uring_setup
// reached the kernel (EFAULT) and mknodat made the FIFO: red with mutant docker-seccomp-own.
// Under gVisor (runsc) the measured answers are logged, and the layer must say the profile is
// not applied. A runtime the engine lacks is skipped with the reason (a failure under CI=true).
func TestSeccompProfileDeniesKernelSurface(t *testing.T) {
	eng := needEngine(t)
	probe := kernelSurfaceProbe(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	info, err := eng.Info(ctx)
	cancel()
	if err != nil {
		t.Fatal(err)
	}
	for _, rt := range []string{"runc", "crun", "runsc"} {
		t.Run(rt, func(t *testing.T) {
			if _, ok := info.Runtimes[rt]; !ok {
				stop := t.Skipf
				if os.Getenv("CI") == "true" {
					stop = t.Fatalf
				}
				stop("SKIP: the engine at %s has no runtime %q (scripts/docker-runtimes.sh registers crun and runsc)", eng.Where(), rt)
			}
			e := newExec(t, eng, testPolicy(func(p *policy.Policy) { dksec.Of(p).Runtime = rt }))
			var layer executor.Layer
			for _, l := range e.Layers() {
				if l.Name == LayerSeccomp {
					layer = l
				}
			}
			res := mustCall(t, e, ToolPython, map[string]any{"code": probe})
			ms := probeLine.FindAllStringSubmatch(res.Stdout, -1)
			if len(ms) < 9 {
				t.Fatalf("%s: the probe printed %d results: exit %d, stdout %q, stderr %q", rt, len(ms), res.ExitCode, res.Stdout, res.Stderr)
			}
			var reached []string
			for _, m := range ms {
				ret, _ := strconv.Atoi(m[2])
				errno, _ := strconv.Atoi(m[3])
				if ret >= 0 || (errno != 1 && errno != 38) {
					reached = append(reached, m[1]+" "+m[2]+" errno "+m[3])
				}
			}
			if rt == "runsc" {
				t.Logf("runsc (gVisor's own kernel answers; the profile is not applied): %s", strings.Join(reached, "; "))
				if layer.Active || !strings.Contains(layer.Detail, "NOT APPLIED") {
					t.Errorf("runsc: the seccomp layer claims a profile gVisor does not apply: %+v", layer)
				}
				return
			}
			if len(reached) > 0 {
				t.Errorf("%s: calls reached the host kernel: %s\nseccomp layer: %+v", rt, strings.Join(reached, "; "), layer)
			}
			if !layer.Active || !strings.Contains(layer.Detail, "serve's profile") {
				t.Errorf("%s: the seccomp layer does not report serve's profile: %+v", rt, layer)
			}
		})
	}
}

// TestSeccompProfileShape holds the profile to "the engine's default minus sysdeny's list":
// default-deny, none of the denied calls allowed (unconditionally or by a rule), clone
// guarded by the namespace flags, clone3 ENOSYS, native ABIs only.
func TestSeccompProfileShape(t *testing.T) {
	opt := seccompOpt()
	js, ok := strings.CutPrefix(opt, "seccomp=")
	if !ok {
		t.Fatalf("option %q", opt[:min(len(opt), 40)])
	}
	var p seccompProfile
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		t.Fatal(err)
	}
	if p.DefaultAction != scmpErrno {
		t.Errorf("defaultAction %s: calls the profile does not list must be refused", p.DefaultAction)
	}
	for _, a := range p.ArchMap {
		if len(a.Sub) > 0 {
			t.Errorf("%s opens sub-architectures %v", a.Arch, a.Sub)
		}
	}
	allowed := map[string]bool{}
	for _, r := range p.Syscalls {
		for _, n := range r.Names {
			if r.Action == scmpAllow {
				allowed[n] = true
			}
			if r.Action == scmpAllow && len(r.Args) == 0 && (n == "clone" || n == "socket") {
				t.Errorf("%s allowed without its argument rule", n)
			}
		}
		if slices.Contains(r.Names, "clone") && (len(r.Args) != 1 || r.Args[0].Value != sysdeny.CloneNamespaceFlags) {
			t.Errorf("clone rule %+v", r)
		}
		if slices.Contains(r.Names, "clone3") && (r.Action != scmpErrno || r.ErrnoRet == nil || *r.ErrnoRet != enosys) {
			t.Errorf("clone3 rule %+v: libc falls back to clone only on ENOSYS", r)
		}
	}
	for _, n := range append(append([]string(nil), sysdeny.Denied...), sysdeny.DeniedLegacy...) {
		if allowed[n] {
			t.Errorf("%s is denied by sysdeny but allowed by the profile", n)
		}
	}
	for _, n := range []string{"read", "execve", "memfd_create", "fchmodat2", "futex_waitv", "rseq", "clock_gettime"} {
		if !allowed[n] {
			t.Errorf("%s is in the engine's default allow list but not in the profile", n)
		}
	}
	if len(allowed) < 300 {
		t.Errorf("only %d calls allowed", len(allowed))
	}
}

// TestSeccompLayerReportsWhatIsInForce: the layer is active only when the engine has seccomp
// and recorded serve's profile on the container (not merely "the engine has seccomp", which
// --check once reported while Docker 20.10's default let io_uring_setup through), and never
// under gVisor without --oci-seccomp.
func TestSeccompLayerReportsWhatIsInForce(t *testing.T) {
	for _, c := range []struct {
		engine, own, gvisor, oci bool
		active                   bool
		says                     string
	}{
		{true, true, false, false, true, "serve's profile"},
		{true, false, false, false, false, "NOT IN FORCE"},
		{false, false, false, false, false, "no seccomp support"},
		{true, true, true, false, false, "NOT APPLIED"},
		{true, true, true, true, true, "serve's profile"},
	} {
		e := &Executor{spec: spec{gvisor: c.gvisor, gvisorSeccomp: c.oci}}
		l := e.seccompLayer(c.engine, c.own)
		if l.Active != c.active || !strings.Contains(l.Detail, c.says) {
			t.Errorf("engine %v, own %v, gvisor %v, oci %v: %+v, want active %v saying %q", c.engine, c.own, c.gvisor, c.oci, l, c.active, c.says)
		}
	}
	if !ownSeccomp([]string{"no-new-privileges", seccompOpt()}) || ownSeccomp([]string{"no-new-privileges"}) || ownSeccomp([]string{"seccomp=unconfined"}) {
		t.Error("ownSeccomp does not tell serve's profile from its absence")
	}
}
