package allowlist

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/executor"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	sa "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/sandbox"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

func rules(fs []verify.Finding) []string {
	var r []string
	for _, f := range fs {
		r = append(r, f.Rule)
	}
	return r
}

func auditOf(p *policy.Policy, path string) []verify.Finding {
	return verify.Audit(p, path, Scheme.Audit)
}

func TestAuditDefaultIsClean(t *testing.T) {
	ws := t.TempDir()
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534) // as init makes one under root: its commands' to write (else MS113)
	}
	p, err := builtIn(ws)
	if err != nil {
		t.Fatal(err)
	}
	if fs := auditOf(p, ""); len(fs) != 0 {
		t.Fatalf("built-in policy has findings: %+v", fs)
	}
}

// pinInterpreter pins python3, or Debian's versioned python3.X where no python3 link exists
// (python3.11-minimal ships none): the MS101 case must never skip for want of a name.
func pinInterpreter(t *testing.T) policy.Command {
	for _, n := range []string{"python3", "python3.13", "python3.12", "python3.11", "perl", "sh"} {
		if c, err := generate.Pin(n); err == nil {
			return c
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no interpreter on the fixed PATH to allowlist: CI must install python3")
	}
	t.Skip("no interpreter on the fixed PATH to allowlist")
	return policy.Command{}
}

func TestAuditRules(t *testing.T) {
	ws := t.TempDir()
	base := func() *policy.Policy {
		p, err := builtIn(ws)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	py := pinInterpreter(t)
	links := t.TempDir()
	disguised := filepath.Join(links, "innocent")
	if err := os.Symlink(py.Path, disguised); err != nil {
		t.Fatal(err)
	}
	etcLink := filepath.Join(links, "ws")
	if err := os.Symlink("/etc", etcLink); err != nil {
		t.Fatal(err)
	}
	// A directory every local user may write (sticky, as /tmp): a missing read path in it can be
	// made by anyone; one that exists is judged by its owner and the directories above it.
	shared := t.TempDir()
	os.Chmod(shared, 0o777|os.ModeSticky)
	sharedSub := filepath.Join(shared, "sub")
	os.Mkdir(sharedSub, 0o777)
	os.Chmod(sharedSub, 0o777)
	mine := filepath.Join(shared, "mine")
	os.Mkdir(mine, 0o755)
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, ".ssh"), 0o700)
	t.Setenv("HOME", home)
	// a script pinned by hand, with its right sha256: serve refuses to start with it (trial32 F25)
	script := filepath.Join(links, "srv.py")
	os.WriteFile(script, []byte("#!/usr/bin/python3\nprint('hi')\n"), 0o755)
	scriptSum, _ := generate.HashFile(script)
	if got := rules(auditOf(base(), "")); slices.Contains(got, "MS114") {
		t.Errorf("MS114 reported for the built-in policy's ELF binaries: %v", got)
	}
	cases := []struct {
		rule   string
		mutate func(*policy.Policy)
	}{
		{"MS101", func(p *policy.Policy) { alsec.Of(p).Commands = append(alsec.Of(p).Commands, py) }},
		{"MS101", func(p *policy.Policy) {
			alsec.Of(p).Commands = append(alsec.Of(p).Commands, policy.Command{Name: "innocent", Path: disguised, SHA256: py.SHA256})
		}},
		{"MS105", func(p *policy.Policy) { alsec.Of(p).Workspace = etcLink }},
		{"MS103", func(p *policy.Policy) { alsec.Of(p).Commands[0].SHA256 = strings.Repeat("ab", 32) }},
		{"MS104", func(p *policy.Policy) { alsec.Of(p).Env["GITHUB_TOKEN"] = "x" }},
		{"MS116", func(p *policy.Policy) { alsec.Of(p).Env["GOFLAGS"] = "-toolexec=./x" }},
		{"MS116", func(p *policy.Policy) {
			alsec.Of(p).Env["XDG_CONFIG_HOME"] = filepath.Join(alsec.Of(p).Workspace, "cfg")
		}},
		// the calls' working directory is the workspace: a bare relative value names it (atk40b F4)
		{"MS116", func(p *policy.Policy) { alsec.Of(p).Env["CC"] = "tools/cc" }},
		{"MS116", func(p *policy.Policy) { alsec.Of(p).Env["XDG_CONFIG_HOME"] = "cfg" }},
		{"MS105", func(p *policy.Policy) { alsec.Of(p).Workspace = "/home" }},
		// a home's dot directory, there or not made yet (trial30 F13)
		{"MS105", func(p *policy.Policy) { alsec.Of(p).Workspace = filepath.Join(home, ".ssh") }},
		{"MS105", func(p *policy.Policy) { alsec.Of(p).Workspace = filepath.Join(home, ".config", "not-yet") }},
		{"MS107", func(p *policy.Policy) { alsec.Of(p).SetNet(policy.Network{Mode: policy.NetAll}) }},
		{"MS108", func(p *policy.Policy) { alsec.Of(p).Commands[0].AllowOutsidePaths = true }},
		{"MS109", func(p *policy.Policy) { alsec.Of(p).ReadPaths = []string{"/etc"} }},
		{"MS110", func(p *policy.Policy) {
			i := slices.IndexFunc(alsec.Of(p).Commands, func(c policy.Command) bool { return c.Name == "sort" })
			alsec.Of(p).Commands[i].DenyArgs = nil
		}},
		{"MS111", func(p *policy.Policy) { alsec.Of(p).Workspace = filepath.Join(ws, "missing") }},
		{"MS114", func(p *policy.Policy) {
			alsec.Of(p).Commands = append(alsec.Of(p).Commands, policy.Command{Name: "srv", Path: script, SHA256: scriptSum})
		}},
		{"MS112", func(p *policy.Policy) { alsec.Of(p).ReadPaths = []string{filepath.Join(shared, "data")} }},
		{"MS112", func(p *policy.Policy) { alsec.Of(p).ReadPaths = []string{sharedSub} }},
		{"MS401", func(p *policy.Policy) { p.Limits.Timeout.Duration = 1 << 40 }},
		{"MS402", func(p *policy.Policy) { p.Limits.MaxOutputBytes = 8 << 20 }},
		{"MS403", func(p *policy.Policy) { p.Limits.Pids = 4096 }},
		{"MS406", func(p *policy.Policy) { p.Audit.Path = filepath.Join(alsec.Of(p).Workspace, "logs", "audit.jsonl") }},
		{"MS407", func(p *policy.Policy) {
			d := t.TempDir()
			alsec.Of(p).ReadPaths = []string{d}
			p.Audit.Path = filepath.Join(d, "audit.jsonl")
		}},
	}
	for _, c := range cases {
		p := base()
		c.mutate(p)
		if got := rules(auditOf(p, "")); !slices.Contains(got, c.rule) {
			t.Errorf("%s not reported; got %v", c.rule, got)
		}
	}
	if os.Geteuid() == 0 {
		// under root, a root-owned 0755 workspace is not nobody's to write; one another user owns
		// is that user's, whom commands then run as
		if got := rules(auditOf(base(), "")); !slices.Contains(got, "MS113") {
			t.Errorf("MS113 not reported for a workspace root owns; got %v", got)
		}
		os.Chown(ws, 4321, 4321)
		if got := rules(auditOf(base(), "")); slices.Contains(got, "MS113") {
			t.Errorf("MS113 reported for a workspace uid 4321 owns (commands run as it): %v", got)
		}
		os.Chown(ws, 0, 0)
	}
	// The negative control: an existing read path the server's user owns, in the same shared
	// directory, is no finding.
	p := base()
	alsec.Of(p).ReadPaths = []string{mine}
	if got := rules(auditOf(p, "")); slices.Contains(got, "MS112") {
		t.Errorf("MS112 reported for %s, a directory the server's user owns: %v", mine, auditOf(p, ""))
	}
	// The workspace's and the file's permissions.
	os.Chmod(ws, 0o777)
	file := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(file, []byte("# e2b_0123456789abcdef0123456789\n"), 0o666)
	os.Chmod(file, 0o666)
	got := rules(auditOf(base(), file))
	for _, want := range []string{"MS106", "MS301", "MS404"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not reported; got %v", want, got)
		}
	}
}

func TestExplainHonestGaps(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc"}}
	all := []executor.Layer{{Name: sa.LayerPinnedExec, Active: true}, {Name: sa.LayerLandlockFS, Active: true},
		{Name: sa.LayerNetNS, Active: false, Detail: "needs root"}, {Name: sa.LayerSeccomp, Active: false},
		{Name: sa.LayerCleanEnv, Active: true}, {Name: sa.LayerPIDNS, Active: true}}
	status := func(ts []verify.Threat, prefix string) verify.Threat {
		for _, t := range ts {
			if strings.HasPrefix(t.Threat, prefix) {
				return t
			}
		}
		return verify.Threat{}
	}
	ts, err := verify.Explain(p, all, Scheme.Threats)
	if err != nil {
		t.Fatal(err)
	}
	if s := status(ts, "reach the network"); s.Status != verify.NotEnforced || s.Note == "" {
		t.Errorf("network with no netns and no seccomp: %+v", s)
	}
	if s := status(ts, "run a program"); s.Status != verify.Enforced {
		t.Errorf("pinned exec: %+v", s)
	}
	alsec.Of(p).Commands = append(alsec.Of(p).Commands, policy.Command{Name: "python3"})
	ts, _ = verify.Explain(p, all, Scheme.Threats)
	if s := status(ts, "run a program"); s.Status != verify.NotEnforced {
		t.Errorf("interpreter allowlisted but: %+v", s)
	}
	for _, th := range ts {
		if len(th.Scenarios) == 0 {
			t.Errorf("%q names no scenario that attacks it", th.Threat)
		}
	}
}

// Every layer a threat names is one the executor reports: a typo would make a threat
// "NOT enforced" on every host.
func TestThreatLayersAreReported(t *testing.T) {
	for _, th := range Scheme.Threats {
		for _, l := range th.Layers {
			if !slices.Contains(Scheme.Layers, l) {
				t.Errorf("%q names layer %q, which the executor never reports", th.Threat, l)
			}
		}
	}
}

// The adapter says n/a, not contained, when the policy has no tool for a step.
func TestAdapterNotApplicable(t *testing.T) {
	p := policy.Default(alsec.Name)
	alsec.Of(p).Commands = []policy.Command{{Name: "wc", Path: "/usr/bin/wc"}}
	a := &harness.Arena{WS: "/w", Outside: "/o", Tag: "T"}
	for _, st := range []harness.Step{{Python: "x"}, {Shell: "x"}, {Argv: []string{"cat", "x"}}} {
		var na *harness.NotApplicableError
		if _, err := (adapter{}).Params(st, a, p); !errors.As(err, &na) {
			t.Errorf("%+v: no n/a (%v)", st, err)
		}
	}
	c, err := (adapter{}).Params(harness.Step{Argv: []string{"wc", "{{outside}}/x"}}, a, p)
	if err != nil || c.Arguments.(map[string]any)["args"].([]string)[0] != "/o/x" {
		t.Fatalf("argv step: %+v %v", c, err)
	}
}

// TestReadPathsKernelView (atk40 F10): read_paths = ["/proc"] passed verify without a word while
// the call read the host's process table and every command line. A read path that is, holds or
// lies in /proc, /sys, /dev or /run (also as it resolves: /var/run) is MS115, high, with the fix;
// a plain data directory is not.
func TestReadPathsKernelView(t *testing.T) {
	ws := t.TempDir()
	link := filepath.Join(t.TempDir(), "procs")
	if err := os.Symlink("/proc", link); err != nil {
		t.Fatal(err)
	}
	for _, r := range []string{"/proc", "/proc/", "/proc/self", "/sys/fs/cgroup", "/dev", "/run", "/run/user", "/var/run", "/", link} {
		p, err := builtIn(ws)
		if err != nil {
			t.Fatal(err)
		}
		alsec.Of(p).ReadPaths = []string{r}
		var hit *verify.Finding
		for _, f := range auditOf(p, "") {
			if f.Rule == "MS115" {
				hit = &f
			}
		}
		if hit == nil {
			t.Errorf("read_paths = [%q]: no MS115", r)
			continue
		}
		if hit.Severity != verify.High || !strings.Contains(hit.Fix, "remove it from allowlist.read_paths") || !strings.Contains(hit.Message, "opens the host's") {
			t.Errorf("read_paths = [%q]: %+v", r, *hit)
		}
	}
	for _, r := range []string{"/opt/data", "/usr/share/dict", "/procs", "/srv"} {
		p, _ := builtIn(ws)
		alsec.Of(p).ReadPaths = []string{r}
		if got := rules(auditOf(p, "")); slices.Contains(got, "MS115") {
			t.Errorf("read_paths = [%q]: MS115 reported: %v", r, auditOf(p, ""))
		}
	}
}
