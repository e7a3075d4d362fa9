package generate

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// planEnv is a hermetic Env (home, config and project in temporary directories) with HOME set to it.
func planEnv(t *testing.T) Env {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	return Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: t.TempDir(), GOOS: runtime.GOOS}
}

// NewPlan: an existing, different policy is replaced only with Force, with a yes, or when the
// wizard started from that very file; a no refuses and says how to go on.
func TestPlanAsksBeforeReplacingAPolicy(t *testing.T) {
	env := planEnv(t)
	out := filepath.Join(env.Home, "policy.toml")
	if err := os.WriteFile(out, []byte("# someone else's policy\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var asked []string
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: "~/policy.toml", Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}}
	answer := false
	opts.Confirm = func(msg string) (bool, error) { asked = append(asked, msg); return answer, nil }

	_, err := NewPlan(opts)
	if err == nil || !strings.Contains(err.Error(), out+" already exists: pass --force") {
		t.Fatalf("a no must refuse: %v", err)
	}
	if len(asked) != 1 || asked[0] != out+" exists. Replace it (the old one is kept as a backup)?" {
		t.Fatalf("asked %q", asked)
	}

	answer, asked = true, nil
	pl, err := NewPlan(opts)
	if err != nil || len(asked) != 1 || pl.PolicyPath != out || !pl.PolicyFile.Existed || pl.Unchanged() {
		t.Fatalf("a yes plans the replacement: %v %q %+v", err, asked, pl)
	}

	for name, o := range map[string]PlanOptions{
		"force":      func() PlanOptions { o := opts; o.Force = true; return o }(),
		"wizardBase": func() PlanOptions { o := opts; o.Answers.Base = pl.Policy; o.BaseFrom = out; return o }(),
	} {
		asked = nil
		if _, err := NewPlan(o); err != nil || len(asked) != 0 {
			t.Errorf("%s: nothing to ask: %v %q", name, err, asked)
		}
	}
}

// NewPlan plans the clients' configs; Preview shows each file; once written, the same plan is
// unchanged; with Print the entries are snippets and no config is planned.
func TestPlanClientsPreviewAndPrint(t *testing.T) {
	env := planEnv(t)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Clients: []string{"cursor"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	pl, err := NewPlan(opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(pl.Clients.Changes) != 1 || len(pl.Clients.Targets) != 1 || pl.Unchanged() || pl.Snippets != nil {
		t.Fatalf("%+v", pl)
	}
	var w bytes.Buffer
	pl.Preview(&w)
	if !strings.HasPrefix(w.String(), "\nThese files will change:\n\npolicy: "+opts.PolicyOut+" (new file") || !strings.Contains(w.String(), "Cursor (") {
		t.Fatalf("preview:\n%s", w.String())
	}
	if _, err := Apply(append([]FileChange{pl.PolicyFile}, pl.Clients.Changes...)); err != nil {
		t.Fatal(err)
	}
	if again, err := NewPlan(opts); err != nil || !again.Unchanged() {
		t.Fatalf("a second run must change nothing: %v", err)
	}

	opts.Print, opts.PolicyOut = true, filepath.Join(env.Home, "q.toml")
	pl, err = NewPlan(opts)
	if err != nil || len(pl.Snippets) != 1 || len(pl.Clients.Changes) != 0 || !strings.HasPrefix(pl.Snippets[0], "# Cursor (") {
		t.Fatalf("print: %v %+v", err, pl)
	}
}

// NewPlan refuses a token variable without an HTTP URL before it reads any file.
func TestPlanTokenEnvNeedsHTTP(t *testing.T) {
	env := planEnv(t)
	_, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", TokenEnv: "T"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"), Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "--token-env goes with --http URL") {
		t.Fatalf("%v", err)
	}
}

// Plan.Report: the written files, the start check, the HTTP entry's server and how to serve it.
func TestPlanReport(t *testing.T) {
	pl := &Plan{PolicyPath: "/etc/p.toml", ClientEntry: NewHTTPEntry("http://127.0.0.1:8765/mcp", "TOK"),
		PolicyFile: FileChange{Path: "/etc/p.toml", New: []byte("x")}}
	res := &Written{Files: []WriteResult{{Path: "/etc/p.toml", Backup: "/etc/p.toml.bak"}},
		Probes: []Probe{{Tools: []string{"run"}, Elapsed: 12 * time.Millisecond}}, HTTPDown: ErrNotRunning.Error() + " (127.0.0.1:8765: connection refused)"}
	var w bytes.Buffer
	pl.Report(&w, res)
	want := "wrote /etc/p.toml; the old file is at /etc/p.toml.bak\n" +
		"checked: the entry starts and answers MCP in 12 ms, with the tools run\n" +
		"note: nothing answers at http://127.0.0.1:8765/mcp yet (127.0.0.1:8765: connection refused); the client entries point there\n" +
		"serve it with: MCPSANDBOX_TOKEN=\"$TOK\" mcpsandbox serve --policy /etc/p.toml --http 127.0.0.1:8765\n" +
		"your clients read the token from $TOK: set it where they start (the configs hold only its name), and where serve starts: without it serve checks no token and every local process can call it\n"
	if w.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", w.String(), want)
	}
	// serve's own variable is named too: the line run where it is not set served with no token
	// (trial36 F3)
	pl.ClientEntry = NewHTTPEntry("http://127.0.0.1:8765/mcp", "MCPSANDBOX_TOKEN")
	w.Reset()
	pl.Report(&w, res)
	if !strings.Contains(w.String(), "serve it with: MCPSANDBOX_TOKEN=\"$MCPSANDBOX_TOKEN\" mcpsandbox serve --policy") {
		t.Fatalf("the serve line without its token:\n%s", w.String())
	}

	pl = &Plan{PolicyPath: "/etc/p.toml", PolicyFile: FileChange{Existed: true}}
	w.Reset()
	pl.Report(&w, &Written{Probes: []Probe{{Tools: []string{"run"}}}})
	if !strings.HasSuffix(w.String(), "already configured, nothing changed: the policy /etc/p.toml\n") {
		t.Fatalf("unchanged:\n%s", w.String())
	}
}

// A policy file several entries use: changing it changes them all, so the plan names the other
// entries (Claude Code's other projects, other clients) before writing, and not the one it writes.
func TestPlanNamesOtherEntriesOfThePolicy(t *testing.T) {
	env := planEnv(t)
	pol := filepath.Join(env.Home, "policy.toml")
	os.WriteFile(pol, []byte("# the old policy\n"), 0o644)
	other := filepath.Join(env.Home, "other-project")
	entry := func(name string) string {
		return `{"command": "/bin/mcpsandbox", "args": ["serve", "--policy", "` + pol + `"]}`
	}
	proj, _ := filepath.EvalSymlinks(env.Project)
	os.WriteFile(filepath.Join(env.Home, ".claude.json"), []byte(`{"mcpServers": {"sandbox": `+entry("u")+`}, "projects": {
  "`+other+`": {"mcpServers": {"sandbox": `+entry("a")+`}},
  "`+proj+`": {"mcpServers": {"sandbox": `+entry("b")+`}}
}}`), 0o600)
	os.MkdirAll(filepath.Join(env.Home, ".gemini"), 0o755)
	os.WriteFile(filepath.Join(env.Home, ".gemini", "settings.json"), []byte(`{
  // JSONC
  "mcpServers": {"box": `+entry("c")+`, "unrelated": {"command": "x", "args": []}}
}`), 0o644)
	pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: pol, Force: true,
		Clients: []string{"claude-code"}, Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}, Confirm: func(string) (bool, error) { return false, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	pl.Preview(&w)
	got := w.String()
	// each names its scope: the user scope's entry in ~/.claude.json read as the local one being
	// written (trial36 F8). Red under mutant init-shared-no-scope.
	for _, want := range []string{pol + " is also used by these entries", `Claude Code (local, project ` + other + `): "sandbox" in ` + filepath.Join(env.Home, ".claude.json") + "\n",
		`Claude Code (user): "sandbox" in ` + filepath.Join(env.Home, ".claude.json") + "\n",
		`Gemini CLI (user): "box" in ` + filepath.Join(env.Home, ".gemini", "settings.json"), "a file of its own (--policy-out"} {
		if !strings.Contains(got, want) {
			t.Errorf("preview lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "project "+proj+")") || strings.Contains(got, "unrelated") {
		t.Errorf("the entry being written, or one of another policy, is listed:\n%s", got)
	}
}

// --print with no client gives the "mcpServers" JSON alone on stdout, no comment line: a user's
// `init --print --yes > servers.json` is a file the MCP Inspector's --config reads as it is (it
// refused a "#" line: "Unexpected token '#' … is not valid JSON"); what it is for goes to stderr.
func TestPrintGenericEntryIsJSONAlone(t *testing.T) {
	env := planEnv(t)
	pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Print: true, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }})
	if err != nil || len(pl.Snippets) != 1 {
		t.Fatalf("%v %+v", err, pl)
	}
	var cfg struct {
		MCPServers map[string]struct{ Command string } `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(pl.Snippets[0]), &cfg); err != nil || cfg.MCPServers["sandbox"].Command != "/bin/mcpsandbox" {
		t.Errorf("stdout's entry is not a JSON file as it is (%v):\n%s", err, pl.Snippets[0])
	}
	if !strings.Contains(pl.GenericFor, "the MCP Inspector: --config FILE --server sandbox") {
		t.Errorf("what the entry is for, for stderr: %q", pl.GenericFor)
	}
}

// --print with no client for a server at a URL gives the MCP Inspector's form: "type":
// "streamable-http" (without it the Inspector starts a command) and no header, for the
// Inspector sends it as written; stderr's line gives the token in --header from the shell
// (trial33 F2: Cursor's form, no type and a ${env:VAR} header, failed there both ways).
func TestPrintGenericHTTPEntryIsTheInspectors(t *testing.T) {
	env := planEnv(t)
	pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox", HTTPURL: "http://127.0.0.1:8765/mcp", TokenEnv: "TOK"},
		Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"), Binary: "/bin/mcpsandbox", Print: true, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }})
	if err != nil || len(pl.Snippets) != 1 {
		t.Fatalf("%v %+v", err, pl)
	}
	var cfg struct {
		MCPServers map[string]map[string]any `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(pl.Snippets[0]), &cfg); err != nil {
		t.Fatalf("%v:\n%s", err, pl.Snippets[0])
	}
	got := cfg.MCPServers["sandbox"]
	if got["type"] != "streamable-http" || got["url"] != "http://127.0.0.1:8765/mcp" || got["headers"] != nil || len(got) != 2 {
		t.Errorf("the entry is not the Inspector's HTTP form:\n%s", pl.Snippets[0])
	}
	for _, want := range []string{"the MCP Inspector", "--config servers.json --server sandbox --header \"Authorization: Bearer $TOK\""} {
		if !strings.Contains(pl.GenericFor, want) {
			t.Errorf("what the entry is for lacks %q: %q", want, pl.GenericFor)
		}
	}
}

// A policy that is there already, declined: besides --force (which loses its hand edits) and
// --policy-out, the refusal names init --policy with the same clients, the way to add them to
// that policy as it is (trial22: a second setup for one more client read as needing --force).
// A file that is not a policy gets no such advice.
func TestPolicyRefusalNamesInitPolicy(t *testing.T) {
	env := planEnv(t)
	out := filepath.Join(env.Home, "policy.toml")
	theirs := policy.Default("docker")
	theirs.Limits.Timeout.Duration = 45 * time.Second // a hand edit
	data, err := policy.Marshal(theirs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: out, Binary: "/bin/mcpsandbox",
		Clients: []string{"cursor", "gemini:project"}, Log: &bytes.Buffer{},
		Confirm: func(string) (bool, error) { return false, nil }}
	want := "mcpsandbox init --policy " + out + " --client cursor --client gemini:project"
	if _, err := NewPlan(opts); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("the refusal should name %q: %v", want, err)
	}
	if err := os.WriteFile(out, []byte("# someone else's file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewPlan(opts); err == nil || strings.Contains(err.Error(), "--policy "+out) {
		t.Fatalf("not a policy: no --policy advice: %v", err)
	}
}

// A client entry whose text stays while the policy it runs changes is not shown as "unchanged"
// alone: the server behind it changes, to another scheme here (trial30 F7).
func TestPreviewSaysAnUnchangedEntryRunsTheChangedPolicy(t *testing.T) {
	env := planEnv(t)
	pol := filepath.Join(env.Home, "policy.toml")
	os.WriteFile(pol, []byte("version = 1\nscheme = \"allowlist\"\n"), 0o644)
	plan := func() *Plan {
		pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: pol, Force: true,
			Clients: []string{"cursor"}, Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}, Confirm: func(string) (bool, error) { return true, nil }})
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	first := plan().Clients.Changes[0]
	os.MkdirAll(filepath.Dir(first.Path), 0o755)
	os.WriteFile(first.Path, first.New, 0o644) // the entry as init writes it, already there
	pl := plan()
	if !pl.Clients.Changes[0].Unchanged() {
		t.Fatalf("the entry changed:\n%s", pl.Clients.Changes[0].Preview())
	}
	var w bytes.Buffer
	pl.Preview(&w)
	want := first.Path + " (entry unchanged: it runs " + pol + ", which changes above, from the allowlist scheme to docker)"
	if !strings.Contains(w.String(), want) || strings.Contains(w.String(), first.Path+" (unchanged)") {
		t.Errorf("preview lacks %q:\n%s", want, w.String())
	}
}

// init --policy FILE uses the file as it is: the report says so, not "the policy these answers
// make" (there were no answers; trial30 F5).
func TestReportUsingAPolicyAsItIs(t *testing.T) {
	env := planEnv(t)
	pol := filepath.Join(env.Home, "policy.toml")
	b, err := policy.Marshal(policy.Default("docker"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(pol, b, 0o644)
	pl, err := NewPlan(PlanOptions{Env: env, PolicyOut: pol, UsePolicy: true, Clients: []string{"cursor"}, Binary: "/bin/mcpsandbox",
		Log: &bytes.Buffer{}, Confirm: func(string) (bool, error) { return true, nil }})
	if err != nil {
		t.Fatal(err)
	}
	var w bytes.Buffer
	pl.Report(&w, &Written{Files: []WriteResult{{Path: pl.Clients.Changes[0].Path}}})
	if !strings.Contains(w.String(), "using "+pol+" as it is") || strings.Contains(w.String(), "these answers") {
		t.Errorf("report:\n%s", w.String())
	}
}

// The policy init writes names its audit log where this init's environment puts it: "" would be
// resolved by each serve in its client's environment, and a client that passes no
// XDG_STATE_HOME (Codex) would audit to a second log audit verify never reads (trial32 F10).
func TestPolicyNamesTheAuditLogThisInitSees(t *testing.T) {
	for _, state := range []string{"", "/srv/my-state"} {
		env := planEnv(t)
		t.Setenv("XDG_STATE_HOME", state)
		pl, err := NewPlan(PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env,
			PolicyOut: filepath.Join(env.Home, "policy.toml"), Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{},
			Confirm: func(string) (bool, error) { return true, nil }})
		if err != nil {
			t.Fatal(err)
		}
		want := filepath.Join(env.Home, ".local", "state", "mcpsandbox", "audit.jsonl")
		if state != "" {
			want = filepath.Join(state, "mcpsandbox", "audit.jsonl")
		}
		if pl.Policy.Audit.Path != want {
			t.Errorf("XDG_STATE_HOME=%q: audit.path %q, want %q", state, pl.Policy.Audit.Path, want)
		}
		if !bytes.Contains(pl.PolicyFile.New, []byte(`path = "`+want+`"`)) {
			t.Errorf("XDG_STATE_HOME=%q: the file does not name %s:\n%s", state, want, pl.PolicyFile.New)
		}
	}
}

// A different server of the entry's name: init --policy (which refuses --name) names the policy's
// name key as the way to add its entry beside it (trial32 F15), and --print, which writes nothing,
// says the printed entry pasted there makes two of that name (trial32 F16).
func TestNameConflictAdviceFitsTheForm(t *testing.T) {
	env := planEnv(t)
	pol := filepath.Join(env.Home, "p.toml")
	os.WriteFile(pol, []byte("version = 1\nscheme = \"docker\"\n"), 0o644)
	cursor := filepath.Join(env.Home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	os.WriteFile(cursor, []byte(`{"mcpServers": {"sandbox": {"command": "other"}}}`), 0o644)
	opts := PlanOptions{Env: env, PolicyOut: pol, UsePolicy: true, Clients: []string{"cursor"}, Binary: "/bin/mcpsandbox",
		Log: &bytes.Buffer{}, Confirm: func(string) (bool, error) { return false, nil }}
	_, err := NewPlan(opts)
	if err == nil || !strings.Contains(err.Error(), `set name = "…" in `+pol) || strings.Contains(err.Error(), "--name") {
		t.Errorf("init --policy: %v", err)
	}
	// and what differs (trial32 F15b)
	if err == nil || !strings.Contains(err.Error(), "(it runs other; this one runs /bin/mcpsandbox serve --policy "+pol) {
		t.Errorf("what differs: %v", err)
	}
	var log bytes.Buffer
	opts.Print, opts.Log = true, &log
	if _, err := NewPlan(opts); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), `makes two servers named "sandbox"`) {
		t.Errorf("--print: %q", log.String())
	}
}

// Claude Code keeps a server switched off per project outside the entry (projects → DIR →
// disabledMcpServers): init checked an entry Claude Code showed "Disabled for this project" (trial33
// F14). The report says so, with how to switch it on, and leaves the list be. Red with mutant
// init-claude-disabled-silent.
func TestReportSaysClaudeCodeHasItSwitchedOff(t *testing.T) {
	env := planEnv(t)
	cfg := filepath.Join(env.Home, ".claude.json")
	proj, _ := filepath.EvalSymlinks(env.Project)
	old := `{"projects": {"` + proj + `": {"disabledMcpServers": ["sandbox"], "disabledMcpjsonServers": ["other"]}}}`
	if err := os.WriteFile(cfg, []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		client, name string
		want         string
	}{
		{"claude-code", "sandbox", "disabledMcpServers"},
		{"claude-code:user", "sandbox", "disabledMcpServers"},
		{"claude-code:project", "other", "disabledMcpjsonServers"},
		{"claude-code", "other", ""},
		{"cursor", "sandbox", ""},
	} {
		opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: c.name}, Env: env, PolicyOut: filepath.Join(env.Home, c.name+".toml"),
			Binary: "/bin/mcpsandbox", Clients: []string{c.client}, Log: &bytes.Buffer{},
			Confirm: func(string) (bool, error) { return false, nil }}
		pl, err := NewPlan(opts)
		if err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		pl.Report(&w, &Written{})
		said := strings.Contains(w.String(), "Claude Code has \""+c.name+"\" switched off for this project (in "+c.want+" of "+proj) &&
			strings.Contains(w.String(), "/mcp, select "+c.name+", Enable")
		if said != (c.want != "") {
			t.Errorf("%s %s: said %v:\n%s", c.client, c.name, said, w.String())
		}
	}
	if b, _ := os.ReadFile(cfg); string(b) != old {
		t.Errorf("the user's list was changed:\n%s", b)
	}
}

// Plan.Report names every client init left as it was, also when it wrote others: init for three
// clients, two of which had the entry, printed only the third (trial48 F1). The same for one scope
// of a file two scopes share. Red under mutant init-report-unchanged-clients-silent.
func TestReportNamesUnchangedClientsBesideWritten(t *testing.T) {
	env := planEnv(t)
	opts := PlanOptions{Answers: Answers{Scheme: "docker", Name: "sandbox"}, Env: env, PolicyOut: filepath.Join(env.Home, "p.toml"),
		Binary: "/bin/mcpsandbox", Log: &bytes.Buffer{}, Confirm: func(string) (bool, error) { t.Fatal("nothing to ask"); return false, nil }}
	run := func(clients ...string) string {
		t.Helper()
		o := opts
		o.Clients = clients
		pl, err := NewPlan(o)
		if err != nil {
			t.Fatal(err)
		}
		files, err := Apply(append([]FileChange{pl.PolicyFile}, pl.Clients.Changes...))
		if err != nil {
			t.Fatal(err)
		}
		var w bytes.Buffer
		pl.Report(&w, &Written{Files: files})
		return w.String()
	}
	run("claude-code", "cursor")
	got := run("claude-code", "cursor", "windsurf")
	claude := filepath.Join(env.Home, ".claude.json")
	cursor := filepath.Join(env.Home, ".cursor", "mcp.json")
	for _, want := range []string{"wrote " + filepath.Join(env.Home, ".codeium", "windsurf", "mcp_config.json"),
		"already configured, nothing changed: Claude Code (local) in " + claude + " (under projects → ",
		"\n  and Cursor (user) in " + cursor + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("the report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Windsurf (user) in") {
		t.Errorf("the client written is named as unchanged:\n%s", got)
	}
	// a file two scopes share: the local entry is there, the user one is written into the same file
	got = run("claude-code", "claude-code:user")
	if !strings.Contains(got, "wrote "+claude) || !strings.Contains(got, "already configured, nothing changed: Claude Code (local) in "+claude) ||
		strings.Contains(got, "Claude Code (user) in") {
		t.Errorf("one scope of a shared file:\n%s", got)
	}
}
