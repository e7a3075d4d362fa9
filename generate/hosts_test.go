package generate

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Host words as --network-hosts and the wizard take them: presets expand, every host comes back
// canonical and once, every bad word is named with its fix.
func TestExpandHosts(t *testing.T) {
	cases := []struct {
		words []string
		want  []string // nil with errs set: refused
		errs  []string // each must appear in the error
	}{
		{[]string{"pypi"}, []string{"pypi.org", "files.pythonhosted.org"}, nil},
		{[]string{"PyPI", "npm", "github"}, []string{"pypi.org", "files.pythonhosted.org", "registry.npmjs.org", "github.com", "codeload.github.com", "objects.githubusercontent.com"}, nil},
		{[]string{"pypi.org", "pypi", " API.Example.com.:443 ", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"},
			[]string{"pypi.org", "files.pythonhosted.org", "api.example.com:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443"}, nil},
		{[]string{"https://pypi.org/simple"}, nil, []string{`"https://pypi.org/simple" is a URL`, `e.g. "pypi.org"`}},
		{[]string{"pypi.org/simple"}, nil, []string{"has a path", `"pypi.org"`}},
		{[]string{"pip"}, nil, []string{`"pip" is neither a preset (pypi, npm, github) nor a full host name`}},
		{[]string{"*"}, nil, []string{"allows every host"}},
		{[]string{"*.com"}, nil, []string{"too broad"}},
		{[]string{"127.0.0.1"}, nil, []string{"loopback", "always refuses"}},
		{[]string{"169.254.169.254"}, nil, []string{"cloud metadata"}},
		{[]string{"10.*.*.*"}, nil, []string{"exact literals"}},
		{[]string{"pypi.org:0"}, nil, []string{"1..65535"}},
		{[]string{""}, nil, []string{"empty host"}},
		// every bad word, not just the first; the good ones do not hide them
		{[]string{"ok.example.com", "http://a.example.com", "b", "192.168.1.1"}, nil, []string{`"http://a.example.com" is a URL`, `"b" is neither`, "private (192.168.0.0/16)"}},
	}
	for _, c := range cases {
		got, err := ExpandHosts(c.words)
		if c.errs != nil {
			if err == nil {
				t.Errorf("%q: accepted as %q", c.words, got)
				continue
			}
			for _, e := range c.errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("%q: error %q lacks %q", c.words, err, e)
				}
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q = %q, %v; want %q", c.words, got, err, c.want)
		}
		// What init accepts, the policy accepts, as written.
		if _, err := policy.NetworkHosts(got...); err != nil {
			t.Errorf("%q: the policy refuses what init accepted: %v", c.words, err)
		}
	}
}

// The answers' network, for each scheme: what the policy gets (as its file says it), or the
// refusal, which names what conflicts and what to do.
func TestBuildPolicyNetwork(t *testing.T) {
	ws := filepath.Join(t.TempDir(), "ws")
	cases := []struct {
		a    Answers
		want string // Net().String() of the scheme's section, or the error's text
		err  bool
	}{
		{Answers{Scheme: policy.SchemeAllowlist}, "false", false},
		{Answers{Scheme: policy.SchemeAllowlist, Network: true}, "true", false},
		{Answers{Scheme: policy.SchemeAllowlist, Hosts: []string{"pypi", "api.example.com:443"}}, `["pypi.org", "files.pythonhosted.org", "api.example.com:443"]`, false},
		{Answers{Scheme: policy.SchemeAllowlist, Hosts: []string{"pypi"}, Network: true}, "every host (--network) and only the listed hosts (--network-hosts) conflict", true},
		{Answers{Scheme: policy.SchemeAllowlist, Hosts: []string{"https://pypi.org"}}, `network hosts: "https://pypi.org" is a URL: write the host only, e.g. "pypi.org"`, true},
		{Answers{Scheme: policy.SchemeAllowlist, Hosts: []string{" "}}, "empty host", true},
		{Answers{Scheme: policy.SchemeDocker}, `"none"`, false},
		{Answers{Scheme: policy.SchemeDocker, Hosts: []string{"npm"}}, `["registry.npmjs.org"]`, false},
		{Answers{Scheme: policy.SchemeDocker, DockerNetwork: "bridge"}, `"bridge"`, false},
		{Answers{Scheme: policy.SchemeDocker, DockerNetwork: "bridge", Hosts: []string{"npm"}}, `the docker network "bridge" and a host list conflict`, true},
		{Answers{Scheme: policy.SchemeDocker, Network: true}, "for docker list the hosts calls need (--network-hosts", true},
		{Answers{Scheme: policy.SchemeE2B, Hosts: []string{"pypi"}}, "the e2b scheme takes no host list", true},
	}
	for _, c := range cases {
		c.a.Workspace, c.a.Allow = ws, []string{"wc"}
		p, err := BuildPolicy(c.a)
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
		n := p.Allowlist.Net()
		if c.a.Scheme == policy.SchemeDocker {
			n = p.Docker.Net()
		}
		if n.String() != c.want {
			t.Errorf("%s: network %s, want %s", name, n, c.want)
		}
		// The old all-or-nothing views never widen a host list: code that knows no lists keeps
		// the sandbox offline.
		if n.Mode == policy.NetHosts && (p.Allowlist.AllHosts() || p.Docker.NetworkName() != "none") {
			t.Errorf("%s: a host list opens the network: allowlist all hosts %v, docker network %q", name, p.Allowlist.AllHosts(), p.Docker.NetworkName())
		}
		// The preview says it as the file does.
		if s := strings.Join(Summary(p), "\n"); !strings.Contains(s, "network "+c.want) {
			t.Errorf("%s: summary lacks network %s:\n%s", name, c.want, s)
		}
	}
}

// scripted runs a scheme's network questions as the wizard does (a question is asked only when
// its When holds; an Input answer must pass Validate), with the answers given in order: nil takes
// the question's default. It returns the defaults the questions showed.
func scripted(t *testing.T, a *Answers, answers ...any) []any {
	t.Helper()
	var shown []any
	for _, q := range SchemeQuestions[a.Scheme] {
		if q.Flag != "network" && q.Flag != "network-hosts" || q.When != nil && !q.When(a) {
			continue
		}
		if len(answers) == 0 {
			t.Fatalf("question %q asked, no answer left", q.Message(a))
		}
		def := q.Default(a, Env{})
		shown = append(shown, def)
		v := answers[0]
		answers = answers[1:]
		if v == nil {
			v = def
		}
		if q.Kind == Select && !slices.Contains(q.Options(a), v.(string)) {
			t.Fatalf("%q is no option of %q", v, q.Message(a))
		}
		if q.Kind == Input && q.Validate != nil {
			if err := q.Validate(a, v.(string), Env{}); err != nil {
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
	for _, scheme := range []string{policy.SchemeAllowlist, policy.SchemeDocker} {
		t.Run(scheme, func(t *testing.T) {
			ws := filepath.Join(t.TempDir(), "ws")
			a := &Answers{Scheme: scheme, Workspace: ws, Allow: []string{"wc"}}
			a.Prefill(func(string) bool { return false })
			shown := scripted(t, a, NetChoiceHosts, []string{"pypi", "github"}, "api.example.com:443, *.example.org")
			if shown[0] != NetChoiceNone || len(shown[1].([]string)) != 0 || shown[2] != "" {
				t.Errorf("a first run's defaults: %q", shown)
			}
			p, err := BuildPolicy(*a)
			if err != nil {
				t.Fatal(err)
			}
			want := `["pypi.org", "files.pythonhosted.org", "github.com", "codeload.github.com", "objects.githubusercontent.com", "api.example.com:443", "*.example.org"]`
			net := func(p *policy.Policy) policy.Network {
				if scheme == policy.SchemeDocker {
					return p.Docker.Net()
				}
				return p.Allowlist.Net()
			}
			if got := net(p).String(); got != want {
				t.Fatalf("network %s, want %s", got, want)
			}

			// Re-run, every default taken: the same policy.
			rerun := func() *Answers {
				r := AnswersFrom(p)
				r.Prefill(func(string) bool { return false })
				return &r
			}
			r := rerun()
			shown = scripted(t, r, nil, nil, nil)
			if shown[0] != NetChoiceHosts || !slices.Equal(shown[1].([]string), []string{"pypi", "github"}) || shown[2] != "api.example.com:443, *.example.org" {
				t.Errorf("a re-run's defaults: %q", shown)
			}
			back, err := BuildPolicy(*r)
			if err != nil || back.Hash() != p.Hash() {
				t.Fatalf("a re-run with the defaults changes the policy: %v %s", err, net(back))
			}

			// Untick github, keep the typed hosts, add a preset by name in the free entry.
			r = rerun()
			scripted(t, r, nil, []string{"pypi"}, "api.example.com:443, *.example.org, npm")
			if got, _ := BuildPolicy(*r); got == nil || net(got).String() != `["pypi.org", "files.pythonhosted.org", "api.example.com:443", "*.example.org", "registry.npmjs.org"]` {
				t.Errorf("untick github, add npm: %v", got)
			}

			// The free entry checks each host as the policy does, and refuses an empty list.
			r = rerun()
			var hostsQ Question
			for _, q := range SchemeQuestions[scheme] {
				if q.Flag == "network-hosts" && q.Kind == Input {
					hostsQ = q
				}
			}
			scripted(t, r, NetChoiceHosts, []string{}, "api.example.com:443, *.example.org")
			r.Hosts = nil // as after unticking every preset and clearing the entry
			for v, want := range map[string]string{
				"https://api.example.com/v1": "is a URL",
				"localhost":                  "neither a preset",
				"":                           "no host chosen",
				" , ":                        "no host chosen",
				"none":                       "",
				"api.example.com":            "",
			} {
				err := hostsQ.Validate(r, v, Env{})
				if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
					t.Errorf("other hosts %q: %v, want %q", v, err, want)
				}
			}
			// "none" typed there means no network.
			r = rerun()
			scripted(t, r, nil, nil, "none")
			if got, err := BuildPolicy(*r); err != nil || net(got).Mode != policy.NetNone {
				t.Errorf("none typed: %v %v", err, got)
			}
			// None, and every host.
			r = rerun()
			scripted(t, r, NetChoiceNone)
			if got, err := BuildPolicy(*r); err != nil || net(got).Mode != policy.NetNone {
				t.Errorf("none: %v %+v", err, got)
			}
			r = rerun()
			scripted(t, r, NetChoiceAll)
			got, err := BuildPolicy(*r)
			if err != nil {
				t.Fatal(err)
			}
			wantAll := "true"
			if scheme == policy.SchemeDocker {
				wantAll = `"bridge"`
			}
			if net(got).String() != wantAll {
				t.Errorf("every host: %s, want %s", net(got), wantAll)
			}
			// A re-run from every host starts there.
			p = got
			r = rerun()
			if shown := scripted(t, r, nil); shown[0] != NetChoiceAll {
				t.Errorf("a re-run from every host shows %q", shown[0])
			}
			if again, _ := BuildPolicy(*r); again == nil || again.Hash() != p.Hash() {
				t.Errorf("a re-run from every host changes it")
			}
		})
	}
}

// A re-run keeps a docker network the policy names (one init never offers: "mynet").
func TestRerunKeepsDockerNetwork(t *testing.T) {
	p := policy.Default(policy.SchemeDocker)
	p.Docker.SetNet(policy.Network{Mode: policy.NetNamed, Name: "mynet"})
	a := AnswersFrom(p)
	a.Prefill(func(string) bool { return false })
	if shown := scripted(t, &a, nil); shown[0] != NetChoiceAll {
		t.Errorf("shows %q", shown[0])
	}
	back, err := BuildPolicy(a)
	if err != nil || back.Docker.Net().String() != `"mynet"` {
		t.Fatalf("%v %v", err, back)
	}
}
