package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// trial37 F5: init with flags and --force over a hand-edited policy dropped memory, env and
// read_paths and said only "wrote": every setting that changes or goes is named.
func TestLostSettingsNamesWhatChangesOrGoes(t *testing.T) {
	old := `version = 1
[limits]
memory = "4GiB"
timeout = "30s"
[allowlist]
env = { LANG = "C.UTF-8", GOCACHE = "/tmp/gocache", GOFLAGS = "-mod=mod" }
read_paths = ["/etc/ssl/openssl.cnf"]
[[allowlist.commands]]
name = "go"
path = "/usr/local/go/bin/go"
[[allowlist.commands]]
name = "node"
path = "/usr/bin/node"
`
	now := `version = 1
[limits]
memory = "256MiB"
timeout = "30s"
[allowlist]
env = { LANG = "C.UTF-8" }
[[allowlist.commands]]
name = "go"
path = "/usr/local/go/bin/go"
[[allowlist.commands]]
name = "grep"
path = "/usr/bin/grep"
`
	got := LostSettings([]byte(old), []byte(now))
	want := []string{
		`limits.memory "4GiB" -> "256MiB"`,
		"allowlist.commands[node] removed",
		"allowlist.env: GOCACHE, GOFLAGS removed",
		"allowlist.read_paths removed",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := LostSettings([]byte(now), []byte(now)); got != nil {
		t.Fatalf("nothing lost: %q", got)
	}
}

// The plan says what --force drops before it writes (the log), and a refusal or the question
// names it too.
func TestPlanNamesSettingsAForceDrops(t *testing.T) {
	env := planEnv(t)
	out := filepath.Join(env.Home, "policy.toml")
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: "~/policy.toml", Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}}
	opts.Confirm = func(string) (bool, error) { return false, nil }
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(pl.PolicyFile.New), `memory           = "256MiB"`, `memory           = "4GiB"`, 1)
	if edited == string(pl.PolicyFile.New) {
		t.Fatalf("no memory line to edit in\n%s", pl.PolicyFile.New)
	}
	if err := os.WriteFile(out, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	const lost = `replacing it changes or drops these settings of it: limits.memory "4GiB" -> "256MiB"`
	var asked string
	opts.Confirm = func(msg string) (bool, error) { asked = msg; return false, nil }
	if _, err := NewPlan(opts); err == nil || !strings.Contains(err.Error(), lost) || !strings.Contains(asked, lost) {
		t.Fatalf("the question and the refusal name what a replacement drops:\n%q\n%v", asked, err)
	}
	log := &bytes.Buffer{}
	opts.Force, opts.Log = true, log
	if _, err := NewPlan(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "warning: "+out+" is replaced (--force); "+lost+".") {
		t.Fatalf("--force says what it drops before the write:\n%s", log)
	}
}

// A hand comment written on a key's line before the template's words is kept once, the
// template's words once (trial38 F6: they came twice), and the change is said in the file's
// own spelling ("60s", not "1m"). Red with mutants init-comment-template-twice and
// init-lost-respelt.
func TestForceKeepsAHandCommentOnceInTheFilesSpelling(t *testing.T) {
	env := planEnv(t)
	out := filepath.Join(env.Home, "policy.toml")
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: "~/policy.toml", Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	const was = `timeout          = "30s"`
	edited := strings.Replace(string(pl.PolicyFile.New), was, `timeout          = "60s"  # team: builds are slow`, 1)
	if edited == string(pl.PolicyFile.New) {
		t.Fatalf("no timeout line to edit in\n%s", pl.PolicyFile.New)
	}
	if err := os.WriteFile(out, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	log := &bytes.Buffer{}
	opts.Force, opts.Log = true, log
	pl, err = NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(pl.PolicyFile.New), "\n") {
		if strings.HasPrefix(l, "timeout ") {
			line = l
		}
	}
	if !strings.HasPrefix(line, was) || strings.Count(line, "# team: builds are slow") != 1 || strings.Count(line, "#") != 2 {
		t.Errorf("the timeout line after --force: %q, want the template's words once and the hand comment once", line)
	}
	if !strings.Contains(log.String(), `limits.timeout "60s" -> "30s"`) {
		t.Errorf("--force says the change in the file's spelling:\n%s", log)
	}
}
