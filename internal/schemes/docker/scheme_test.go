package docker

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	sd "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Every layer a threat names is one the executor reports: a typo would make a threat
// "NOT enforced" on every host.
func TestThreatLayersAreReported(t *testing.T) {
	for _, th := range Scheme.Threats {
		if len(th.Scenarios) == 0 {
			t.Errorf("%q names no scenario that attacks it", th.Threat)
		}
		for _, l := range th.Layers {
			if !slices.Contains(Scheme.Layers, l) {
				t.Errorf("%q names layer %q, which the executor never reports", th.Threat, l)
			}
		}
	}
	all, err := harness.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range Scheme.Threats {
		for _, id := range th.Scenarios {
			if !slices.ContainsFunc(all, func(s *harness.Scenario) bool { return s.ID == id && offer.Applies(s) }) {
				t.Errorf("%q names scenario %s, which does not exist or does not apply to docker", th.Threat, id)
			}
		}
	}
}

func layers(active map[string]bool) []executor.Layer {
	var ls []executor.Layer
	for _, id := range sd.LayerIDs {
		ls = append(ls, executor.Layer{Name: id, Active: active[id] || id != sd.LayerRuntime && id != sd.LayerNetwork})
	}
	return ls
}

// explain says the container shares the host kernel unless a VM-grade runtime is in force,
// and names a network the policy opened.
func TestExplainHonestGaps(t *testing.T) {
	find := func(ts []verify.Threat, prefix string) verify.Threat {
		for _, t := range ts {
			if strings.HasPrefix(t.Threat, prefix) {
				return t
			}
		}
		return verify.Threat{}
	}
	p := policy.Default(dksec.Name)
	ts, err := verify.Explain(p, layers(map[string]bool{sd.LayerNetwork: true}), Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	if k := find(ts, "escape to the host through a kernel bug"); k.Status != verify.NotEnforced || !strings.Contains(k.Note, "share") {
		t.Errorf("runc: %+v", k)
	}
	if n := find(ts, "reach the network"); n.Status != verify.Enforced {
		t.Errorf("network none: %+v", n)
	}
	dksec.Of(p).Runtime = "runsc"
	dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
	ts, _ = verify.Explain(p, layers(map[string]bool{sd.LayerRuntime: true}), Scheme.Threats)
	if k := find(ts, "escape to the host through a kernel bug"); k.Status == verify.NotEnforced {
		t.Errorf("runsc: %+v", k)
	}
	if n := find(ts, "reach the network"); n.Status != verify.NotEnforced || !strings.Contains(n.Note, "bridge") {
		t.Errorf("network bridge: %+v", n)
	}
}

// A host list: explain names the reachable hosts on the network threat, not on the unix
// socket one (containers keep network none), and the audit does not call it a docker network.
func TestExplainHostList(t *testing.T) {
	p := policy.Default(dksec.Name)
	n, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org:443")
	if err != nil {
		t.Fatal(err)
	}
	dksec.Of(p).SetNet(n)
	ts, err := verify.Explain(p, layers(map[string]bool{sd.LayerNetwork: true}), Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	for _, th := range ts {
		switch {
		case strings.HasPrefix(th.Threat, "reach the network"):
			if !strings.Contains(th.Note, "pypi.org, files.pythonhosted.org:443") {
				t.Errorf("network threat: %+v", th)
			}
		case strings.HasPrefix(th.Threat, "connect to unix sockets"):
			if th.Status == verify.NotEnforced {
				t.Errorf("unix socket threat with a host list: %+v", th)
			}
		}
	}
	for _, f := range verify.Audit(p, "", Scheme.Audit) {
		if f.Rule == "MS201" {
			t.Errorf("a host list reported as a docker network: %+v", f)
		}
	}
}

func TestAuditDefault(t *testing.T) {
	var got []string
	for _, f := range verify.Audit(policy.Default(dksec.Name), "", Scheme.Audit) {
		got = append(got, f.Rule)
	}
	if !slices.Equal(got, []string{"MS205"}) {
		t.Errorf("default docker policy: %v, want only MS205 (no VM-grade runtime)", got)
	}
}

// MS205's fix says runsc is there when the engine has it registered, and to install gVisor when
// not (trial25, #3).
func TestAuditRuntimeFixSaysWhatIsRegistered(t *testing.T) {
	defer func(f func() string) { registeredVMRuntime = f }(registeredVMRuntime)
	for rt, want := range map[string]string{"runsc": `runsc is already registered with this engine: set runtime = "runsc"`, "": "install gVisor"} {
		registeredVMRuntime = func() string { return rt }
		fs := verify.Audit(policy.Default(dksec.Name), "", Scheme.Audit)
		if len(fs) != 1 || fs[0].Rule != "MS205" || !strings.Contains(fs[0].Fix, want) {
			t.Errorf("engine with %q registered: %+v, want MS205 whose fix says %q", rt, fs, want)
		}
	}
	if got := sd.VMRuntime([]string{"runc", "kata", "runsc"}); got != "runsc" {
		t.Errorf("VMRuntime: %q, want runsc first", got)
	}
	if got := sd.VMRuntime([]string{"runc", "crun"}); got != "" {
		t.Errorf("VMRuntime of runc and crun: %q, want none", got)
	}
}

// The adapter's programs run as the harness means them: checked by running them on the host
// with its own sh and python3 (the same code the container runs).
func TestAdapterParams(t *testing.T) {
	p := policy.Default(dksec.Name)
	a := &harness.Arena{Root: "/r", WS: "/r/ws", Outside: "/r/outside", Tag: "TAG-x"}
	if err := (adapter{}).Prepare(p, &harness.Arena{WS: "/r/ws", Root: "/r"}); err != nil && !strings.Contains(err.Error(), "hand the harness workspace") {
		t.Fatal(err)
	}
	dksec.Of(p).Workspace = "/r/ws"
	c, err := (adapter{}).Params(harness.Step{Shell: `echo "$0" '{{ws}}/x' '{{outside}}/y' "it's"`}, a, p)
	if err != nil || c.Name != sd.ToolShell {
		t.Fatal(c, err)
	}
	out, err := exec.Command("/bin/sh", "-c", c.Arguments.(map[string]any)["script"].(string)).Output()
	if err != nil || string(out) != "TAG-x /workspace/x /r/outside/y it's\n" {
		t.Errorf("shell step ran as %q (%v)", out, err)
	}
	c, _ = (adapter{}).Params(harness.Step{Argv: []string{"printf", "%s|", "a b", "{{ws}}/n", "'q'"}}, a, p)
	out, err = exec.Command("/bin/sh", "-c", c.Arguments.(map[string]any)["script"].(string)).Output()
	if err != nil || string(out) != "a b|/workspace/n|'q'|" {
		t.Errorf("argv step ran as %q (%v)", out, err)
	}
	// With the run's start token, each kind prints it on stderr before the step acts.
	tok := harness.NewStartToken()
	for _, st := range []harness.Step{{Argv: []string{"printf", "x"}, Start: tok}, {Shell: "printf x", Start: tok}} {
		c, _ = (adapter{}).Params(st, a, p)
		cmd := exec.Command("/bin/sh", "-c", c.Arguments.(map[string]any)["script"].(string))
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err = cmd.Output()
		if err != nil || string(out) != "x" || stderr.String() != tok.Joined()+"\n" {
			t.Errorf("%s step with a start token: stdout %q stderr %q (%v)", st.Kind(), out, stderr.String(), err)
		}
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("no python3 on this host: the python step's wrapper is checked in the docker e2e only")
		return
	}
	c, _ = (adapter{}).Params(harness.Step{Python: "import sys\nprint(sys.argv[1], '{{ws}}', \"\\u00e9\")\nsys.exit(4)"}, a, p)
	cmd := exec.Command(py, "-c", c.Arguments.(map[string]any)["code"].(string))
	out, err = cmd.Output()
	if cmd.ProcessState.ExitCode() != 4 || string(out) != "TAG-x /workspace é\n" {
		t.Errorf("python step ran as %q, exit %d (%v)", out, cmd.ProcessState.ExitCode(), err)
	}
}

// verify reports a workspace serve would refuse (a system directory, directly or through a
// symbolic link), and not an ordinary one.
func TestAuditWorkspacePath(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "etc")
	if err := os.Symlink("/etc", link); err != nil {
		t.Fatal(err)
	}
	for ws, want := range map[string]bool{"/etc": true, link: true, "/": true, dir: false, filepath.Join(dir, "absent"): false} {
		p := policy.Default(dksec.Name)
		dksec.Of(p).Workspace = ws
		var got *verify.Finding
		for _, f := range verify.Audit(p, "", Scheme.Audit) {
			if f.Rule == "MS206" {
				got = &f
			}
		}
		if (got != nil) != want || got != nil && !strings.Contains(got.Message, "workspace is") {
			t.Errorf("docker.workspace %s: MS206 %+v, want reported: %v", ws, got, want)
		}
	}
}

// init's refusal without an engine reads as one sentence per thought: what was tried, then what
// to do, without verify's "needed only for the docker scheme" glued on after a full stop.
func TestEngineNeededWording(t *testing.T) {
	for _, c := range []verify.Check{
		{Value: "not reachable at unix:///var/run/docker.sock (default)", Advice: onlyDocker + ": start Docker (systemctl start docker)"},
		{Value: "unable to parse docker host", Advice: onlyDocker},
	} {
		msg := engineNeeded(c, nil, true)
		if strings.Contains(msg, onlyDocker) || strings.Contains(msg, ". needed") || !strings.HasPrefix(msg, "the docker scheme needs a running Docker engine: "+c.Value) ||
			!strings.HasSuffix(msg, ". Nothing was written") {
			t.Errorf("%+v: %q", c, msg)
		}
	}
	// A socket that refuses this user: the wizard, which offers to try again, says a new group
	// needs a new login; init with flags, which ends, does not.
	denied := &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}
	c := verify.Check{Value: "permission denied at unix:///var/run/docker.sock (default)", Advice: onlyDocker + ": the engine is likely running"}
	for _, wiz := range []bool{false, true} {
		if msg := engineNeeded(c, fmt.Errorf("version: %w", denied), wiz); strings.Contains(msg, "counts only from a new login") != wiz {
			t.Errorf("wizard %v: %q", wiz, msg)
		}
	}
	if msg := engineNeeded(c, fmt.Errorf("version: %w", &net.OpError{Op: "dial", Net: "unix", Err: syscall.ENOENT}), true); strings.Contains(msg, "login") {
		t.Errorf("no socket: %q, want nothing about logging in", msg)
	}
	want := "the docker scheme needs a running Docker engine: not reachable at unix:///var/run/docker.sock (default); start Docker (systemctl start docker). Nothing was written"
	if got := engineNeeded(verify.Check{Value: "not reachable at unix:///var/run/docker.sock (default)", Advice: onlyDocker + ": start Docker (systemctl start docker)"}, nil, false); got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}

// serve's own files stay out of the docker workspace as out of the allowlist's: the policy and
// the audit log out of one calls write (the commit would apply a call's rewrite of them), the
// audit log out of one calls read (it holds every call's arguments and output). The section
// said no workspace before, so neither rule saw the docker mount.
func TestAuditOwnFilesOutOfTheDockerWorkspace(t *testing.T) {
	ws := t.TempDir()
	pol := filepath.Join(ws, "policy.toml")
	os.WriteFile(pol, []byte("x"), 0o600)
	rules := func(p *policy.Policy, file string) []string {
		var out []string
		for _, f := range verify.Audit(p, file, Scheme.Audit) {
			out = append(out, f.Rule)
		}
		return out
	}
	p := policy.Default(dksec.Name)
	dksec.Of(p).Workspace, dksec.Of(p).WorkspaceWritable = ws, true
	if got := rules(p, pol); !slices.Contains(got, "MS406") {
		t.Errorf("the policy file in a writable docker workspace: %v, want MS406", got)
	}
	p = policy.Default(dksec.Name)
	dksec.Of(p).Workspace = ws
	p.Audit.Path = filepath.Join(ws, "logs", "audit.jsonl")
	if got := rules(p, ""); !slices.Contains(got, "MS407") {
		t.Errorf("the audit log in a read-only docker workspace: %v, want MS407", got)
	}
	if got := rules(p, pol); slices.Contains(got, "MS406") {
		t.Errorf("the policy file in a read-only docker workspace is only read: %v", got)
	}
	if dir, w := p.WorkspaceMount(); dir != ws || w {
		t.Errorf("WorkspaceMount = %q, %v (serve's start log)", dir, w)
	}
}
