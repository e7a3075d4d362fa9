package generate

import (
	"bytes"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// toyAnswers record what generate asks of a scheme's own answers.
type toyAnswers struct {
	calls []string
	hosts []string
}

func (t *toyAnswers) Flags(*pflag.FlagSet)  {}
func (t *toyAnswers) Questions() []Question { return nil }
func (t *toyAnswers) Missing() []string     { return nil }
func (t *toyAnswers) From(*Answers, *policy.Policy) {
	t.calls = append(t.calls, "from")
}
func (t *toyAnswers) Prefill(SchemeAnswers, func(string) bool, bool) {
	t.calls = append(t.calls, "prefill")
}
func (t *toyAnswers) Apply(_ *Answers, p *policy.Policy, n policy.Network, _ bool) error {
	t.calls = append(t.calls, "apply "+n.String())
	p.Name = "applied"
	return nil
}
func (t *toyAnswers) Network(_ *Answers, hosts []string) (policy.Network, error) {
	t.hosts = hosts
	return policy.NetworkHosts(hosts...)
}
func (t *toyAnswers) AllHosts(*Answers) bool     { return false }
func (t *toyAnswers) SetAllHosts(*Answers, bool) {}
func (t *toyAnswers) Warnings(*policy.Policy) []string {
	return []string{"a toy warning"}
}
func (t *toyAnswers) Prepare(*policy.Policy, io.Writer) (string, error) { return "", nil }

// generate knows no scheme: the answers' scheme's Wizard makes its answers, which say its
// network, apply its section, read it back, prefill, warn and prepare the host.
func TestGenerateAsksTheSchemesAnswers(t *testing.T) {
	name := policy.Schemes[len(policy.Schemes)-1] // any scheme whose default policy is valid on its own
	toy := &toyAnswers{}
	wiz := map[string]*Wizard{name: {New: func() SchemeAnswers { return toy }}}
	a := Answers{Scheme: name, Wizards: wiz, Hosts: []string{"pypi"}}
	p, err := BuildPolicy(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `apply ["pypi.org", "files.pythonhosted.org"]`
	if p.Name != "applied" || !slices.Equal(toy.calls, []string{want}) || len(toy.hosts) != 2 {
		t.Fatalf("BuildPolicy: name %q, calls %q, hosts %q", p.Name, toy.calls, toy.hosts)
	}
	toy.calls = nil
	r := AnswersFrom(p, wiz)
	r.Prefill(func(string) bool { return false })
	if !slices.Equal(toy.calls, []string{"from", "from", "prefill"}) {
		t.Errorf("AnswersFrom, Prefill: calls %q", toy.calls)
	}
	env := planEnv(t)
	var log bytes.Buffer
	pl, err := NewPlan(PlanOptions{Answers: a, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"), Binary: "/bin/mcpsandbox", Log: &log})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "warning: a toy warning") || pl.prepare == nil {
		t.Errorf("NewPlan: log %q, prepare set %v", log.String(), pl.prepare != nil)
	}
	// A scheme without a wizard takes no host list.
	if _, err := BuildPolicy(Answers{Scheme: name, Hosts: []string{"pypi"}}); err == nil || !strings.Contains(err.Error(), "takes no host list") {
		t.Errorf("no wizard, a host list: %v", err)
	}
}
