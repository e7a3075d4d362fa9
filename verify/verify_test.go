package verify

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/mcpsandbox/mcpsandbox/serve"
)

func rules(fs []Finding) []string {
	var r []string
	for _, f := range fs {
		r = append(r, f.Rule)
	}
	return r
}

func TestAuditDefaultIsClean(t *testing.T) {
	ws := t.TempDir()
	p, err := generate.DefaultAllowlist(ws)
	if err != nil {
		t.Fatal(err)
	}
	if fs := Audit(p, ""); len(fs) != 0 {
		t.Fatalf("built-in policy has findings: %+v", fs)
	}
}

func TestAuditRules(t *testing.T) {
	ws := t.TempDir()
	base := func() *policy.Policy {
		p, err := generate.DefaultAllowlist(ws)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	py, err := generate.Pin("python3")
	if err != nil {
		t.Skip("no python3 to allowlist:", err)
	}
	cases := []struct {
		rule   string
		mutate func(*policy.Policy)
	}{
		{"MS101", func(p *policy.Policy) { p.Allowlist.Commands = append(p.Allowlist.Commands, py) }},
		{"MS103", func(p *policy.Policy) { p.Allowlist.Commands[0].SHA256 = strings.Repeat("ab", 32) }},
		{"MS104", func(p *policy.Policy) { p.Allowlist.Env["GITHUB_TOKEN"] = "x" }},
		{"MS105", func(p *policy.Policy) { p.Allowlist.Workspace = "/home" }},
		{"MS107", func(p *policy.Policy) { p.Allowlist.Network = true }},
		{"MS108", func(p *policy.Policy) { p.Allowlist.Commands[0].AllowOutsidePaths = true }},
		{"MS109", func(p *policy.Policy) { p.Allowlist.ReadPaths = []string{"/etc"} }},
		{"MS110", func(p *policy.Policy) {
			i := slices.IndexFunc(p.Allowlist.Commands, func(c policy.Command) bool { return c.Name == "sort" })
			p.Allowlist.Commands[i].DenyArgs = nil
		}},
		{"MS111", func(p *policy.Policy) { p.Allowlist.Workspace = filepath.Join(ws, "missing") }},
		{"MS401", func(p *policy.Policy) { p.Limits.Timeout.Duration = 1 << 40 }},
		{"MS402", func(p *policy.Policy) { p.Limits.MaxOutputBytes = 8 << 20 }},
		{"MS403", func(p *policy.Policy) { p.Limits.Pids = 4096 }},
	}
	for _, c := range cases {
		p := base()
		c.mutate(p)
		if got := rules(Audit(p, "")); !slices.Contains(got, c.rule) {
			t.Errorf("%s not reported; got %v", c.rule, got)
		}
	}
	// The workspace's and the file's permissions.
	os.Chmod(ws, 0o777)
	file := filepath.Join(t.TempDir(), "p.toml")
	os.WriteFile(file, []byte("# e2b_0123456789abcdef0123456789\n"), 0o666)
	os.Chmod(file, 0o666)
	got := rules(Audit(base(), file))
	for _, want := range []string{"MS106", "MS301", "MS404"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not reported; got %v", want, got)
		}
	}
	d := policy.Default(policy.SchemeDocker)
	d.Docker.Network, d.Docker.User, d.Docker.ReadOnly = "bridge", "", false
	d.Docker.Workspace, d.Docker.WorkspaceWritable = "/w", true
	got = rules(Audit(d, ""))
	for _, want := range []string{"MS201", "MS202", "MS203", "MS204", "MS205"} {
		if !slices.Contains(got, want) {
			t.Errorf("%s not reported; got %v", want, got)
		}
	}
	e := policy.Default(policy.SchemeE2B)
	e.E2B.AllowInternet = true
	if got := rules(Audit(e, "")); !slices.Contains(got, "MS302") || !slices.Contains(got, "MS303") {
		t.Errorf("e2b rules: %v", got)
	}
}

func TestExplainHonestGaps(t *testing.T) {
	p := policy.Default(policy.SchemeAllowlist)
	p.Allowlist.Commands = []policy.Command{{Name: "wc"}}
	all := []serve.Layer{{Name: "pinned exec", Active: true}, {Name: "landlock: filesystem", Active: true},
		{Name: "network namespace", Active: false, Detail: "needs root"}, {Name: "seccomp", Active: false},
		{Name: "clean environment", Active: true}, {Name: "pid namespace", Active: true}}
	status := func(ts []Threat, prefix string) Threat {
		for _, t := range ts {
			if len(t.Threat) >= len(prefix) && t.Threat[:len(prefix)] == prefix {
				return t
			}
		}
		return Threat{}
	}
	ts, err := Explain(p, all)
	if err != nil {
		t.Fatal(err)
	}
	if s := status(ts, "reach the network"); s.Status != NotEnforced || s.Note == "" {
		t.Errorf("network with no netns and no seccomp: %+v", s)
	}
	if s := status(ts, "run a program"); s.Status != Enforced {
		t.Errorf("pinned exec: %+v", s)
	}
	p.Allowlist.Commands = append(p.Allowlist.Commands, policy.Command{Name: "python3"})
	ts, _ = Explain(p, all)
	if s := status(ts, "run a program"); s.Status != NotEnforced {
		t.Errorf("interpreter allowlisted but: %+v", s)
	}
	for _, th := range ts {
		if len(th.Scenarios) == 0 {
			t.Errorf("%q names no scenario that attacks it", th.Threat)
		}
	}
	if _, err := Explain(policy.Default(policy.SchemeDocker), nil); err == nil {
		t.Error("explain claimed to know the docker scheme")
	}
}

// The doctor reports every fact it promises, each with a value, and the namespace probes agree
// with what this process can really do.
func TestDoctor(t *testing.T) {
	cs := Doctor(context.Background())
	names := map[string]Check{}
	for _, c := range cs {
		names[c.Name] = c
		if c.Value == "" {
			t.Errorf("%s has no value", c.Name)
		}
	}
	for _, want := range []string{"kernel", "running as root", "landlock", "user namespaces", "pid namespace", "network namespace", "seccomp", "cgroups", "docker engine"} {
		if _, ok := names[want]; !ok {
			t.Errorf("doctor lacks %s", want)
		}
	}
	if os.Geteuid() == 0 && !names["network namespace"].OK {
		t.Errorf("root cannot make a network namespace? %+v", names["network namespace"])
	}
}

// The README lists every audit rule, so the documentation cannot fall behind the code.
func TestREADMEListsRules(t *testing.T) {
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range Rules {
		if !strings.Contains(string(b), "| "+r.ID+" | "+string(r.Severity)+" |") {
			t.Errorf("README.md does not list %s (%s)", r.ID, r.Severity)
		}
	}
}
