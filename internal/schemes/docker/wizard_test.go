package docker

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/pflag"
)

// The wizard offers docker.reuse: --docker-reuse (or the question, "call" by default) writes it,
// the rendered policy loads back with it (and with session_idle and max_sessions when set), and
// a re-run reads it back; "call" stays out of the file; a wrong word or a writable workspace
// with sessions is refused.
func TestWizardReuse(t *testing.T) {
	a := &generate.Answers{Scheme: dksec.Name, Wizards: map[string]*generate.Wizard{dksec.Name: wizard}}
	var q *generate.Question
	for _, x := range wizard.New().Questions() {
		if x.Flag == "docker-reuse" {
			q = &x
		}
	}
	if q == nil || !slices.Equal(q.Options(a), []string{"call", "session"}) || q.Default(a, generate.Env{}) != "call" {
		t.Fatalf("the reuse question: %+v", q)
	}
	q.Set(a, "session")
	if Own(a).Reuse != "session" {
		t.Fatalf("the question's answer is not kept: %+v", Own(a))
	}

	d := &Answers{}
	fl := pflag.NewFlagSet("init", pflag.ContinueOnError)
	d.Flags(fl)
	if err := fl.Parse([]string{"--docker-reuse", "session"}); err != nil {
		t.Fatal(err)
	}
	none := policy.Network{Mode: policy.NetNone, Name: "none"}
	p := policy.Default(dksec.Name)
	if err := d.Apply(a, p, none, false); err != nil || !dksec.Of(p).Sessions() {
		t.Fatalf("apply --docker-reuse session: %v, reuse %q", err, dksec.Of(p).Reuse)
	}
	// the file names the keys a session's refusal and notes name, and says it is per session
	// (trial34 F4: "a fresh locked-down container per call", no max_sessions under [docker])
	path := filepath.Join(t.TempDir(), "p.toml")
	b, err := generate.RenderPolicy(p, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"[docker]  # one locked-down container per MCP session", "\nsession_idle = \"10m\"", "\nmax_sessions = 4  # session containers alive at once"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the session policy lacks %q:\n%s", want, b)
		}
	}
	dksec.Of(p).SessionIdle, dksec.Of(p).MaxSessions = policy.Duration{Duration: 3 * time.Minute}, 6
	b, err = generate.RenderPolicy(p, path)
	if err != nil {
		t.Fatal(err)
	}
	back, err := policy.Parse(path, b)
	if err != nil || *dksec.Of(back) != *dksec.Of(p) {
		t.Fatalf("loads back as %+v (%v)\n%s", dksec.Of(back), err, b)
	}
	re := &Answers{}
	re.From(a, back)
	if re.Reuse != "session" {
		t.Fatalf("a re-run reads reuse %q", re.Reuse)
	}

	d.Reuse = "call"
	p = policy.Default(dksec.Name)
	if err := d.Apply(a, p, none, false); err != nil || dksec.Of(p).Reuse != "" {
		t.Fatalf("apply call: %v, reuse %q", err, dksec.Of(p).Reuse)
	}
	if b, err := generate.RenderPolicy(p, path); err != nil || strings.Contains(string(b), "\nreuse") || strings.Contains(string(b), "per MCP session") {
		t.Fatalf("reuse = call is written (%v):\n%s", err, b)
	}
	d.Reuse = "forever"
	if err := d.Apply(a, policy.Default(dksec.Name), none, false); err == nil || !strings.Contains(err.Error(), `"session"`) {
		t.Fatalf("--docker-reuse forever: %v", err)
	}
	d.Reuse, d.Workspace, d.WorkspaceWritable = "session", t.TempDir(), true
	if err := d.Apply(a, policy.Default(dksec.Name), none, false); err == nil || !strings.Contains(err.Error(), "writable") {
		t.Fatalf("--docker-reuse session with a writable workspace: %v", err)
	}
}

// --docker-workspace-writable without --docker-workspace is refused, naming both flags (a new
// user's trial had it written as a policy with no workspace, the flag dropped without a word);
// in the wizard an emptied workspace takes a writable answer kept from a re-run with it.
func TestWritableWithoutWorkspace(t *testing.T) {
	a := &generate.Answers{Scheme: dksec.Name, Wizards: map[string]*generate.Wizard{dksec.Name: wizard}}
	d := &Answers{}
	fl := pflag.NewFlagSet("init", pflag.ContinueOnError)
	d.Flags(fl)
	if err := fl.Parse([]string{"--docker-workspace-writable"}); err != nil {
		t.Fatal(err)
	}
	none := policy.Network{Mode: policy.NetNone, Name: "none"}
	err := d.Apply(a, policy.Default(dksec.Name), none, false)
	if err == nil || !strings.Contains(err.Error(), "give --docker-workspace DIR too, or drop --docker-workspace-writable") {
		t.Fatalf("--docker-workspace-writable alone: %v", err)
	}
	ws := t.TempDir()
	d.Workspace = ws
	p := policy.Default(dksec.Name)
	if err := d.Apply(a, p, none, false); err != nil || dksec.Of(p).Workspace != ws || !dksec.Of(p).WorkspaceWritable {
		t.Fatalf("with --docker-workspace: %v, %+v", err, dksec.Of(p))
	}

	Own(a).Workspace, Own(a).WorkspaceWritable = ws, true // a re-run's answers
	for _, q := range wizard.New().Questions() {
		if q.Flag == "docker-workspace" {
			q.Set(a, "")
		}
	}
	if Own(a).WorkspaceWritable {
		t.Fatalf("the workspace emptied in the wizard kept writable: %+v", Own(a))
	}
	if err := Own(a).Apply(a, policy.Default(dksec.Name), none, true); err != nil {
		t.Fatalf("the wizard's answers with no workspace: %v", err)
	}
}

// trial35 F3: with a writable workspace serve runs containers as the workspace's owner (where
// root does not own it); the written policy's comment and the preview say so, not only 65534.
func TestWritableWorkspaceUserSaid(t *testing.T) {
	p := policy.Default(dksec.Name)
	d := dksec.Of(p)
	d.Workspace, d.WorkspaceWritable = t.TempDir(), true
	b, err := generate.RenderPolicy(p, filepath.Join(t.TempDir(), "p.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `user       = "65534:65534"  # "uid:gid" inside the container; never root; with this writable workspace, its owner's uid:gid instead`) {
		t.Errorf("the file does not say whom the containers run as:\n%s", b)
	}
	if s := strings.Join(d.Summary(), "\n"); !strings.Contains(s, "user the writable workspace's owner") {
		t.Errorf("the preview: %s", s)
	}
	d.WorkspaceWritable = false
	if b, _ := generate.RenderPolicy(p, filepath.Join(t.TempDir(), "p.toml")); strings.Contains(string(b), "its owner's uid:gid") {
		t.Errorf("a read-only workspace's user is said to be its owner")
	}
}
