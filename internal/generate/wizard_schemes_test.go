package generate_test

// The wizard's answers of the registry's schemes, through generate: each scheme's own answers
// come from its entry (schemes.Wizards), so these tests live outside package generate.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist"
	"github.com/mcpsandbox/mcpsandbox/internal/schemes/docker"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// allowlistAnswers are a's answers for the allowlist scheme over workspace ws, allowing allow.
func allowlistAnswers(a generate.Answers, ws string, allow []string) generate.Answers {
	a.Scheme, a.Wizards = alsec.Name, schemes.Wizards()
	allowlist.Own(&a).Workspace, allowlist.Own(&a).Allow = ws, allow
	return a
}

// dockerNet is a with the docker network its containers join (a policy's, kept by a re-run).
func dockerNet(a generate.Answers, network string) generate.Answers {
	a.Wizards = schemes.Wizards()
	docker.Own(&a).NetworkName = network
	return a
}

// The answers' network, for each scheme: what the policy gets (as its file says it), or the
// refusal, which names what conflicts and what to do.
func TestBuildPolicyNetwork(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	cases := []struct {
		a    generate.Answers
		want string // Net().String() of the scheme's section, or the error's text
		err  bool
	}{
		{generate.Answers{Scheme: alsec.Name}, "false", false},
		{generate.Answers{Scheme: alsec.Name, Network: true}, "true", false},
		{generate.Answers{Scheme: alsec.Name, Hosts: []string{"pypi", "api.example.com:443"}}, `["pypi.org", "files.pythonhosted.org", "api.example.com:443"]`, false},
		{generate.Answers{Scheme: alsec.Name, Hosts: []string{"pypi"}, Network: true}, "every host (--network) and only the listed hosts (--network-hosts) conflict", true},
		{generate.Answers{Scheme: alsec.Name, Hosts: []string{"https://pypi.org"}}, `network hosts: "https://pypi.org" is a URL: write the host only, e.g. "pypi.org"`, true},
		{generate.Answers{Scheme: alsec.Name, Hosts: []string{" "}}, "empty host", true},
		{generate.Answers{Scheme: dksec.Name}, `"none"`, false},
		{generate.Answers{Scheme: dksec.Name, Hosts: []string{"npm"}}, `["registry.npmjs.org"]`, false},
		{dockerNet(generate.Answers{Scheme: dksec.Name}, "bridge"), `"bridge"`, false},
		{dockerNet(generate.Answers{Scheme: dksec.Name, Hosts: []string{"npm"}}, "bridge"), `the docker network "bridge" and a host list conflict`, true},
		{generate.Answers{Scheme: dksec.Name, Network: true}, "for docker list the hosts calls need (--network-hosts", true},
		{generate.Answers{Scheme: e2bsec.Name, Hosts: []string{"pypi"}}, "the e2b scheme takes no host list", true},
	}
	for _, c := range cases {
		c.a.Wizards = schemes.Wizards()
		allowlist.Own(&c.a).Workspace, allowlist.Own(&c.a).Allow = ws, []string{"wc"}
		p, err := generate.BuildPolicy(c.a)
		name := fmt.Sprintf("%s %+v", c.a.Scheme, c.a.Hosts)
		if c.err {
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: err %v, want %q", name, err, c.want)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		n := alsec.Of(p).Net()
		if c.a.Scheme == dksec.Name {
			n = dksec.Of(p).Net()
		}
		if n.String() != c.want {
			t.Errorf("%s: network %s, want %s", name, n, c.want)
		}
		// The old all-or-nothing views never widen a host list: code that knows no lists keeps
		// the sandbox offline.
		if n.Mode == policy.NetHosts && (alsec.Of(p).AllHosts() || dksec.Of(p).NetworkName() != "none") {
			t.Errorf("%s: a host list opens the network: allowlist all hosts %v, docker network %q", name, alsec.Of(p).AllHosts(), dksec.Of(p).NetworkName())
		}
		// The preview says it as the file does.
		if s := strings.Join(generate.Summary(p), "\n"); !strings.Contains(s, "network "+c.want) {
			t.Errorf("%s: summary lacks network %s:\n%s", name, c.want, s)
		}
	}
}

// scripted runs a scheme's network questions as the wizard does (a question is asked only when
// its When holds; an Input answer must pass Validate), with the answers given in order: nil takes
// the question's default. It returns the defaults the questions showed.
func scripted(t *testing.T, a *generate.Answers, answers ...any) []any {
	t.Helper()
	var shown []any
	for _, q := range a.Own().Questions() {
		if q.Flag != "network" && q.Flag != "network-hosts" || q.When != nil && !q.When(a) {
			continue
		}
		if len(answers) == 0 {
			t.Fatalf("question %q asked, no answer left", q.Message(a))
		}
		def := q.Default(a, generate.Env{})
		shown = append(shown, def)
		v := answers[0]
		answers = answers[1:]
		if v == nil {
			v = def
		}
		if q.Kind == generate.Select && !slices.Contains(q.Options(a), v.(string)) {
			t.Fatalf("%q is no option of %q", v, q.Message(a))
		}
		if q.Kind == generate.Input && q.Validate != nil {
			if err := q.Validate(a, v.(string), generate.Env{}); err != nil {
				t.Fatalf("%q refused: %v", v, err)
			}
		}
		q.Set(a, v)
	}
	if len(answers) > 0 {
		t.Fatalf("%d answers left over: %v", len(answers), answers)
	}
	return shown
}

// The wizard's network questions, for allowlist and docker: presets ticked plus hosts typed make
// the list; a re-run shows that list back (presets ticked, the rest typed) and, taken as it is,
// builds the same policy; unticking a preset drops only its hosts; "none" and "every host" work.
func TestNetworkQuestions(t *testing.T) {
	for _, scheme := range []string{alsec.Name, dksec.Name} {
		t.Run(scheme, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			a := &generate.Answers{Scheme: scheme, Wizards: schemes.Wizards()}
			allowlist.Own(a).Workspace, allowlist.Own(a).Allow = ws, []string{"wc"}
			a.Prefill(func(string) bool { return false })
			shown := scripted(t, a, generate.NetChoiceHosts, []string{"pypi", "github"}, "api.example.com:443, *.example.org")
			if shown[0] != generate.NetChoiceNone || len(shown[1].([]string)) != 0 || shown[2] != "" {
				t.Errorf("a first run's defaults: %q", shown)
			}
			p, err := generate.BuildPolicy(*a)
			if err != nil {
				t.Fatal(err)
			}
			want := `["pypi.org", "files.pythonhosted.org", "github.com", "codeload.github.com", "objects.githubusercontent.com", "api.example.com:443", "*.example.org"]`
			net := func(p *policy.Policy) policy.Network {
				if scheme == dksec.Name {
					return dksec.Of(p).Net()
				}
				return alsec.Of(p).Net()
			}
			if got := net(p).String(); got != want {
				t.Fatalf("network %s, want %s", got, want)
			}

			// Re-run, every default taken: the same policy.
			rerun := func() *generate.Answers {
				r := generate.AnswersFrom(p, schemes.Wizards())
				r.Prefill(func(string) bool { return false })
				return &r
			}
			r := rerun()
			shown = scripted(t, r, nil, nil, nil)
			if shown[0] != generate.NetChoiceHosts || !slices.Equal(shown[1].([]string), []string{"pypi", "github"}) || shown[2] != "api.example.com:443, *.example.org" {
				t.Errorf("a re-run's defaults: %q", shown)
			}
			back, err := generate.BuildPolicy(*r)
			if err != nil || back.Hash() != p.Hash() {
				t.Fatalf("a re-run with the defaults changes the policy: %v %s", err, net(back))
			}

			// Untick github, keep the typed hosts, add a preset by name in the free entry.
			r = rerun()
			scripted(t, r, nil, []string{"pypi"}, "api.example.com:443, *.example.org, npm")
			if got, _ := generate.BuildPolicy(*r); got == nil || net(got).String() != `["pypi.org", "files.pythonhosted.org", "api.example.com:443", "*.example.org", "registry.npmjs.org"]` {
				t.Errorf("untick github, add npm: %v", got)
			}

			// The free entry checks each host as the policy does, and refuses an empty list.
			r = rerun()
			var hostsQ generate.Question
			for _, q := range r.Own().Questions() {
				if q.Flag == "network-hosts" && q.Kind == generate.Input {
					hostsQ = q
				}
			}
			scripted(t, r, generate.NetChoiceHosts, []string{}, "api.example.com:443, *.example.org")
			r.Hosts = nil // as after unticking every preset and clearing the entry
			for v, want := range map[string]string{
				"https://api.example.com/v1": "is a URL",
				"localhost":                  "loopback",
				"intranet":                   "neither a preset",
				"":                           "no host chosen",
				" , ":                        "no host chosen",
				"none":                       "",
				"api.example.com":            "",
			} {
				err := hostsQ.Validate(r, v, generate.Env{})
				if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
					t.Errorf("other hosts %q: %v, want %q", v, err, want)
				}
			}
			// "none" typed there means no network.
			r = rerun()
			scripted(t, r, nil, nil, "none")
			if got, err := generate.BuildPolicy(*r); err != nil || net(got).Mode != policy.NetNone {
				t.Errorf("none typed: %v %v", err, got)
			}
			// None, and every host.
			r = rerun()
			scripted(t, r, generate.NetChoiceNone)
			if got, err := generate.BuildPolicy(*r); err != nil || net(got).Mode != policy.NetNone {
				t.Errorf("none: %v %+v", err, got)
			}
			r = rerun()
			scripted(t, r, generate.NetChoiceAll)
			got, err := generate.BuildPolicy(*r)
			if err != nil {
				t.Fatal(err)
			}
			wantAll := "true"
			if scheme == dksec.Name {
				wantAll = `"bridge"`
			}
			if net(got).String() != wantAll {
				t.Errorf("every host: %s, want %s", net(got), wantAll)
			}
			// A re-run from every host starts there.
			p = got
			r = rerun()
			if shown := scripted(t, r, nil); shown[0] != generate.NetChoiceAll {
				t.Errorf("a re-run from every host shows %q", shown[0])
			}
			if again, _ := generate.BuildPolicy(*r); again == nil || again.Hash() != p.Hash() {
				t.Errorf("a re-run from every host changes it")
			}
		})
	}
}

// A re-run keeps a docker network the policy names (one init never offers: "mynet").
func TestRerunKeepsDockerNetwork(t *testing.T) {
	p := policy.Default(dksec.Name)
	dksec.Of(p).SetNet(policy.Network{Mode: policy.NetNamed, Name: "mynet"})
	a := generate.AnswersFrom(p, schemes.Wizards())
	a.Prefill(func(string) bool { return false })
	if shown := scripted(t, &a, nil); shown[0] != generate.NetChoiceAll {
		t.Errorf("shows %q", shown[0])
	}
	back, err := generate.BuildPolicy(a)
	if err != nil || dksec.Of(back).Net().String() != `"mynet"` {
		t.Fatalf("%v %v", err, back)
	}
}

// newAllowlistPolicy is the policy the answers make for commands (its workspace and file in
// temporary directories), and its change: the file is not written.
func newAllowlistPolicy(t *testing.T, a generate.Answers, commands []string) (*policy.Policy, string, generate.FileChange) {
	t.Helper()
	p, err := generate.BuildPolicy(allowlistAnswers(a, filepath.Join(t.TempDir(), "ws"), commands))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "policy.toml")
	c, err := generate.PolicyChange(p, path)
	if err != nil {
		t.Fatal(err)
	}
	return p, path, c
}

// The preview of a policy is a summary: commands on one line, not the commented file.
func TestPolicyPreviewSummary(t *testing.T) {
	p, path, c := newAllowlistPolicy(t, generate.Answers{}, append([]string{"jq"}, generate.DefaultCommands...))
	pv := c.Preview()
	if n := strings.Count(pv, "\n"); n > 8 || !strings.Contains(pv, "jq, cat, cut") || strings.Contains(pv, "sha256 =") {
		t.Errorf("preview (%d lines):\n%s", n, pv)
	}
	// A re-run that drops jq and changes the timeout shows both, - before +.
	os.WriteFile(path, c.New, 0o644)
	a := generate.AnswersFrom(p, schemes.Wizards())
	allowlist.Own(&a).Allow, a.Timeout = allowlist.Own(&a).Allow[1:], "20s"
	p2, err := generate.BuildPolicy(a)
	if err != nil {
		t.Fatal(err)
	}
	c2, _ := generate.PolicyChange(p2, path)
	pv = c2.Preview()
	if !strings.Contains(pv, "-limits: 30s") || !strings.Contains(pv, "+limits: 20s") || strings.Index(pv, "-limits") > strings.Index(pv, "+limits") ||
		!strings.Contains(pv, "-commands (12") || strings.Count(pv, "\n") > 10 {
		t.Errorf("re-run preview:\n%s", pv)
	}
}

// A re-run starts from the policy: its commands (jq), deny_args and settings come back as answers.
func TestAnswersFromPolicy(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	p, err := generate.BuildPolicy(allowlistAnswers(generate.Answers{Timeout: "20s"}, ws, []string{"wc", "jq"}))
	if err != nil {
		t.Fatal(err)
	}
	alsec.Of(p).Commands[1].DenyArgs = []string{"--from-file*"}
	alsec.Of(p).Env["TZ"] = "UTC"
	a := generate.AnswersFrom(p, schemes.Wizards())
	a.Prefill(func(string) bool { return false })
	if own := allowlist.Own(&a); strings.Join(own.Allow, ",") != "wc,jq" || a.Timeout != "20s" || own.Workspace != ws {
		t.Fatalf("answers %+v", a)
	}
	back, err := generate.BuildPolicy(a)
	if err != nil {
		t.Fatal(err)
	}
	if back.Hash() != p.Hash() {
		t.Errorf("rebuilt policy differs: deny_args %v env %v", alsec.Of(back).Commands[1].DenyArgs, alsec.Of(back).Env)
	}
}

// Plan.Write: when the entry does not start, the workspace it created is removed again and the
// policy is not left behind.
func TestPlanWriteRemovesTheWorkspaceItCreated(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in binary is a shell script")
	}
	env := generate.PlanEnv(t)
	bin := filepath.Join(env.Home, "fails")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho cannot start >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(env.Home, "ws")
	var log bytes.Buffer
	pl, err := generate.NewPlan(generate.PlanOptions{Answers: allowlistAnswers(generate.Answers{Name: "sandbox"}, ws, []string{"sh"}),
		Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"), Binary: bin, Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	_, err = pl.Write(context.Background(), os.Environ(), 10*time.Second, &log)
	var se *generate.StartError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "cannot start") {
		t.Fatalf("%v", err)
	}
	if !strings.Contains(log.String(), "created the workspace "+ws) {
		t.Errorf("log: %q", log.String())
	}
	for _, p := range []string{ws, pl.PolicyPath} {
		if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s left behind: %v", p, err)
		}
	}
}

// The wizard's policy path is judged at its question by serve's rule for its own files: a path in
// the workspace the answers name is refused there, with the rule's fix (trial32 F6).
func TestCheckPolicyOutJudgesTheWorkspace(t *testing.T) {
	home := t.TempDir()
	ws := filepath.Join(t.TempDir(), "ws")
	a := allowlistAnswers(generate.Answers{}, ws, []string{"wc"})
	env := generate.Env{Home: home}
	if err := generate.CheckPolicyOut(a, filepath.Join(ws, "sub", "p.toml"), env); err == nil || !strings.Contains(err.Error(), "lies inside the workspace") {
		t.Errorf("a policy in the workspace: %v", err)
	}
	if err := generate.CheckPolicyOut(a, filepath.Join(home, "p.toml"), env); err != nil {
		t.Errorf("a policy outside the workspace: %v", err)
	}
}

// A wizard re-run that changes the scheme starts from the policy's name and the limits it set
// ([limits] apply to every scheme), not the new scheme's defaults; limits left at the old
// scheme's defaults take the new one's (trial32 F18).
func TestPrefillKeepsLimitsAcrossASchemeChange(t *testing.T) {
	base := policy.Default(alsec.Name)
	base.Name = "tools"
	base.Limits.Timeout = policy.Duration{Duration: time.Minute}
	base.Limits.MaxOutputBytes = 1000000
	a := generate.Answers{Scheme: dksec.Name, Base: base, Wizards: schemes.Wizards()}
	a.Prefill(func(string) bool { return false })
	def := generate.AnswersFrom(policy.Default(dksec.Name), schemes.Wizards())
	if a.Name != "tools" || a.Timeout != "1m0s" && a.Timeout != "1m" || a.MaxOutput == def.MaxOutput || a.Memory != def.Memory {
		t.Errorf("name %q timeout %q max-output %q memory %q (docker's defaults: %q %q %q)", a.Name, a.Timeout, a.MaxOutput, a.Memory, def.Timeout, def.MaxOutput, def.Memory)
	}
}

// A re-run keeps what the user wrote in the policy (trial33 F8): with the same answers the file is
// left byte for byte; with a changed one, each comment of the user's goes back before, or on the
// line of, its key or table, one whose key is gone to the end under a line that says so, and one
// inside a value (no place for it) is named for the report; the new file loads as the new policy.
func TestPolicyRerunKeepsTheUsersComments(t *testing.T) {
	p, path, c := newAllowlistPolicy(t, generate.Answers{Timeout: "30s"}, []string{"wc", "jq"})
	text := "# security review 2026-11: ask Ann before changing\n" + string(c.New)
	for _, r := range []struct{ key, with string }{
		{`(?m)^(timeout\s*=.*)$`, "# the CI runner is slow\n$1  # was 10s"},
		{`(?m)^(max_concurrent\s*=[^#]*).*$`, "# keep this low on the laptop\n$1# two is enough"},
		{`(?m)^\[audit\]$`, "# audit: asked by compliance\n[audit]  # the log"},
		{`(?m)^(\[\[allowlist.commands\]\]\nname\s*=\s*"jq")`, "# jq, for the JSON logs\n$1"},
		{`(?m)^(\[\[allowlist.commands\]\]\nname\s*=\s*"wc")`, "# wc: counts only\n$1"},
		{`(?m)^(deny_args = \[)`, "$1 # no reading a list of files\n"},
	} {
		re := regexp.MustCompile(r.key)
		if !re.MatchString(text) {
			t.Fatalf("no %s in the rendered policy:\n%s", r.key, text)
		}
		text = re.ReplaceAllString(text, r.with)
	}
	text += "\n# notes at the end\n"
	os.WriteFile(path, []byte(text), 0o644)
	if op, err := policy.Parse(path, []byte(text)); err != nil || op.Hash() != p.Hash() {
		t.Fatalf("the hand-edited policy: %v", err)
	}
	if same, _ := generate.PolicyChange(p, path); !same.Unchanged() {
		t.Errorf("the same answers rewrote the hand-edited policy:\n%s", same.Preview())
	}
	a := generate.AnswersFrom(p, schemes.Wizards())
	a.Timeout = "20s"
	allowlist.Own(&a).Allow = []string{"wc"}
	p2, err := generate.BuildPolicy(a)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := generate.PolicyChange(p2, path)
	if err != nil {
		t.Fatal(err)
	}
	got := string(c2.New)
	for _, want := range []string{
		"# the CI runner is slow\n",
		"(1s..10m)  # was 10s\n",
		"# keep this low on the laptop\nmax_concurrent   = 4  # calls at once; more wait up to the timeout, then are refused (1..256)  # two is enough\n",
		"# audit: asked by compliance\n[audit]  # the log\n",
		"# security review 2026-11: ask Ann before changing\n",
		"# wc: counts only\n[[allowlist.commands]]\nname   = \"wc\"",
		"the keys these comments were written beside are gone)\n# jq, for the JSON logs\n",
		"# notes at the end\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("the re-run's policy lacks %q:\n%s", want, got)
		}
	}
	if back, err := policy.Parse(path, c2.New); err != nil || back.Hash() != p2.Hash() {
		t.Errorf("the re-run's policy does not load as the new policy: %v", err)
	}
	if !slices.Equal(c2.LostComments, []string{"# no reading a list of files"}) {
		t.Errorf("comments said lost: %q, want the one inside deny_args's value", c2.LostComments)
	}
}

// A re-run that detours through another scheme (its check failed: "Choose another scheme") and
// comes back to the policy's own starts from the policy again (trial35 F14): its commands are the
// defaults, not every built-in one, and the rebuilt policy is the same one (a re-run of it, so
// init does not ask to replace a foreign file). Red with mutant wizard-detour-forgets-base.
func TestPrefillDetourKeepsTheBase(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	p, err := generate.BuildPolicy(allowlistAnswers(generate.Answers{}, ws, []string{"wc", "jq"}))
	if err != nil {
		t.Fatal(err)
	}
	none := func(string) bool { return false }
	a := generate.Answers{Base: p, Wizards: schemes.Wizards()}
	for _, s := range []string{dksec.Name, alsec.Name} { // as runWizard: the scheme, then Prefill
		a.Scheme = s
		a.Prefill(none)
		if s == dksec.Name && a.Base != nil {
			t.Fatalf("on docker the allowlist policy is still the base")
		}
	}
	if a.Base != p {
		t.Errorf("back on the policy's scheme, the base is %v", a.Base)
	}
	if got := allowlist.Own(&a).Allow; !slices.Equal(got, []string{"wc", "jq"}) {
		t.Errorf("back on the policy's scheme, the commands are %q, want the policy's [wc jq]", got)
	}
	if back, err := generate.BuildPolicy(a); err != nil || back.Hash() != p.Hash() {
		t.Errorf("the detour changes the policy: %v", err)
	}
}
