package e2e

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// initEnv is a fresh HOME, config dir and project dir, so init touches nothing real.
type initEnv struct {
	home, config, project string
	env                   []string
}

func newInitEnv(t *testing.T) *initEnv {
	root := t.TempDir()
	e := &initEnv{home: filepath.Join(root, "home"), config: filepath.Join(root, "config"), project: filepath.Join(root, "project")}
	for _, d := range []string{e.home, e.config, e.project} {
		os.MkdirAll(d, 0o755)
	}
	e.env = append(os.Environ(), "HOME="+e.home, "XDG_CONFIG_HOME="+e.config, "NO_COLOR=1")
	return e
}

func (e *initEnv) run(t *testing.T, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"init"}, args...)...)
	cmd.Env, cmd.Dir, cmd.Stdin = e.env, e.project, strings.NewReader(stdin)
	return runCmd(t, cmd)
}

// The acceptance path: init with flags, then start exactly the command init wrote into Claude
// Code's config (local scope, in ~/.claude.json under the project, as `claude mcp add` does), as
// Claude Code would, and list its tools. init itself says it checked that command.
func TestInitFlagsThenServeAnswers(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ai-workspace")
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,sort", "--workspace", ws, "--client", "claude-code", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d: %s %s", code, out, stderr)
	}
	if !strings.Contains(out, "local scope") || !strings.Contains(out, "claude-code:project") ||
		!strings.Contains(out, "checked: the entry starts and answers MCP") || !strings.Contains(out, "run_allowed_command") {
		t.Errorf("init did not say which scope it used, or what the entry answered:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(e.project, ".mcp.json")); err == nil {
		t.Error("wrote the project's .mcp.json without being asked (claude-code:project)")
	}
	var cfg struct {
		Projects map[string]struct {
			MCPServers map[string]struct {
				Command string
				Args    []string
				Type    string
			}
		}
	}
	b, err := os.ReadFile(filepath.Join(e.home, ".claude.json"))
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("~/.claude.json: %v\n%s", err, b)
	}
	proj, _ := filepath.EvalSymlinks(e.project)
	entry := cfg.Projects[proj].MCPServers["sandbox"]
	if !filepath.IsAbs(entry.Command) || entry.Type != "stdio" {
		t.Fatalf("entry %+v in\n%s", entry, b)
	}
	pol, err := policy.Load(entry.Args[len(entry.Args)-1])
	if err != nil || alsec.Of(pol).Workspace != ws || len(alsec.Of(pol).Commands) != 2 {
		t.Fatalf("policy: %v %+v", err, pol)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		t.Fatalf("workspace not created: %v", err)
	}
	cmd := exec.Command(entry.Command, entry.Args...)
	cmd.Env = e.env
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "e2e-init", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("start the configured server: %v", err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) != 4 || tools.Tools[2].Name != "run_allowed_command" { // and the file tools
		t.Fatalf("tools/list = %+v, %v", tools, err)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"--version"}}})
	if err != nil || res.IsError {
		t.Fatalf("wc through the configured server: %v %+v", err, res)
	}
	// The project scope only when asked for.
	out, stderr, code = e.run(t, "", "--scheme", "allowlist", "--allow", "wc,sort", "--workspace", ws, "--client", "claude-code:project", "--yes")
	if code != 0 || !strings.Contains(out, "project scope") {
		t.Fatalf("claude-code:project: exit %d %s %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.project, ".mcp.json")); err != nil {
		t.Errorf("claude-code:project wrote no .mcp.json: %v", err)
	}
}

func TestInitWithoutTerminal(t *testing.T) {
	e := newInitEnv(t)
	_, stderr, code := e.run(t, "", "--scheme", "allowlist")
	if code == 0 || !strings.Contains(stderr, "--workspace DIR") || !strings.Contains(stderr, "--allow") || !strings.Contains(stderr, "--yes") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox")); err == nil {
		t.Error("wrote a policy without answers")
	}
}

// Existing configs: other servers kept, old file backed up, a same-named entry replaced only
// with --force, a malformed or read-only file left exactly as it was.
func TestInitMergesNeverClobbers(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ws")
	cursor := filepath.Join(e.home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	orig := "{\n    \"mcpServers\": {\n        \"github\": {\"command\": \"npx\", \"args\": [\"gh\"]}\n    },\n    \"x\": 1\n}\n"
	write(t, cursor, orig, 0o600)
	args := []string{"--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "cursor", "--yes"}
	if out, stderr, code := e.run(t, "", args...); code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	b, _ := os.ReadFile(cursor)
	if !strings.Contains(string(b), `"github": {"command": "npx", "args": ["gh"]}`) || !strings.Contains(string(b), `"sandbox": {`) || !strings.Contains(string(b), "\n        \"sandbox\"") {
		t.Fatalf("merged config:\n%s", b)
	}
	if st, _ := os.Stat(cursor); st.Mode().Perm() != 0o600 {
		t.Errorf("permissions changed to %v", st.Mode().Perm())
	}
	backups, _ := filepath.Glob(cursor + ".bak-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if bb, _ := os.ReadFile(backups[0]); string(bb) != orig {
		t.Errorf("backup holds %q", bb)
	}
	// The same init again changes nothing, is no conflict, and says so.
	if out, stderr, code := e.run(t, "", args...); code != 0 || strings.Contains(out, "wrote") || !strings.Contains(out, "already configured, nothing changed") {
		t.Fatalf("re-run: exit %d: %s %s", code, out, stderr)
	}
	// A different entry of the same name: without --force init refuses and changes nothing.
	args[3] = "wc,sort" // --allow
	args = append(args, "--policy-out", filepath.Join(e.home, "other.toml"))
	_, stderr, code := e.run(t, "", args...)
	if code == 0 || !strings.Contains(stderr, "--force") || strings.Count(stderr, "already") != 1 {
		t.Fatalf("same name without --force (said once, with the fix): exit %d %s", code, stderr)
	}
	if b2, _ := os.ReadFile(cursor); string(b2) != string(b) {
		t.Error("refused init changed the config")
	}
	if out, stderr, code := e.run(t, "", append(args, "--force")...); code != 0 {
		t.Fatalf("--force: %s %s", out, stderr)
	}
	if b2, _ := os.ReadFile(cursor); strings.Count(string(b2), `"sandbox"`) != 1 {
		t.Errorf("entry duplicated:\n%s", b2)
	}
	// Malformed: located error, file untouched.
	vs := filepath.Join(e.project, ".vscode", "mcp.json")
	os.MkdirAll(filepath.Dir(vs), 0o755)
	bad := "{\n  \"servers\": {\n    \"a\": {\"command\": \"x\",}\n    \"b\": 1\n  }\n}\n"
	write(t, vs, bad, 0o644)
	_, stderr, code = e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "vscode", "--yes", "--force")
	if code == 0 || !strings.Contains(stderr, vs+":4:") || !strings.Contains(stderr, "untouched") {
		t.Fatalf("malformed config: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(vs); string(b) != bad {
		t.Error("malformed config was changed")
	}
	// Read-only: refused, untouched.
	codex := filepath.Join(e.home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o755)
	write(t, codex, "model = \"x\"\n", 0o444)
	_, stderr, code = e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "codex", "--yes", "--force")
	if code == 0 || !strings.Contains(stderr, "read-only") {
		t.Fatalf("read-only config: exit %d %s", code, stderr)
	}
	if b, _ := os.ReadFile(codex); string(b) != "model = \"x\"\n" {
		t.Error("read-only config was changed")
	}
}

func TestInitPrint(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ws")
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "vscode", "--client", "codex", "--print", "--yes")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, `"servers": {`) || !strings.Contains(out, `"type": "stdio"`) || !strings.Contains(out, "[mcp_servers.sandbox]") {
		t.Fatalf("snippets:\n%s", out)
	}
	if strings.Contains(out, "checked:") || !strings.Contains(stderr, "checked: the entry starts") {
		t.Errorf("stdout must hold the snippets alone, the check goes to stderr:\n%s\n%s", out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.project, ".vscode")); err == nil {
		t.Error("--print edited a client config")
	}
	b, err := os.ReadFile(filepath.Join(e.config, "mcpsandbox", "policy.toml"))
	if err != nil || !strings.Contains(string(b), "wc") {
		t.Fatalf("policy: %v\n%s", err, b)
	}
}

// wizardRun drives the real wizard through a pseudo-terminal, as survey's own tests do: a
// vt10x terminal answers the prompts' cursor queries.
type wizardRun struct {
	t    *testing.T
	con  *expect.Console
	cmd  *exec.Cmd
	done chan error
	seen strings.Builder
}

func startWizard(t *testing.T, e *initEnv, env ...string) *wizardRun {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	term := vt10x.New(vt10x.WithWriter(pts))
	con, err := expect.NewConsole(expect.WithStdin(ptm), expect.WithStdout(term), expect.WithCloser(ptm, pts),
		expect.WithDefaultTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := &wizardRun{t: t, con: con, done: make(chan error, 1)}
	w.cmd = exec.Command(binPath, "init")
	w.cmd.Env, w.cmd.Dir = append(append(e.env, "TERM=xterm"), env...), e.project
	w.cmd.Stdin, w.cmd.Stdout, w.cmd.Stderr = con.Tty(), con.Tty(), con.Tty()
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		con.Close()
		if os.Getenv("SHOW_SCREEN") != "" || t.Failed() {
			t.Logf("screen:\n%s", w.seen.String())
		}
	})
	return w
}

// expect waits for any of the texts and says which came (the first listed wins a tie).
func (w *wizardRun) expect(texts ...string) string {
	w.t.Helper()
	ms := make([]expect.ExpectOpt, len(texts))
	for i, s := range texts {
		ms[i] = expect.String(s)
	}
	got, err := w.con.Expect(ms...)
	w.seen.WriteString(got)
	if err != nil {
		w.t.Fatalf("waiting for %q: %v\nscreen so far:\n%s", texts, err, w.seen.String())
	}
	for _, s := range texts {
		if strings.Contains(got, s) {
			return s
		}
	}
	return ""
}

func (w *wizardRun) step(text, send string) {
	w.t.Helper()
	w.expect(text)
	w.con.Send(send)
}

// interrupt sends Ctrl-C until the wizard says it was cancelled: a ^C that reaches the terminal
// before the prompt put it in raw mode is taken by the line discipline (the wizard's process
// has no controlling terminal to be signalled through) and never read, which a loaded machine
// made happen.
func (w *wizardRun) interrupt() {
	w.t.Helper()
	for try := 0; try < 10; try++ {
		w.con.Send("\x03")
		got, err := w.con.Expect(expect.String("cancelled"), expect.WithTimeout(2*time.Second))
		w.seen.WriteString(got)
		if err == nil {
			return
		}
	}
	w.t.Fatalf("Ctrl-C did not cancel the wizard; screen:\n%s", w.seen.String())
}

// exit waits for the wizard to end and returns its error (nil for exit 0).
func (w *wizardRun) exit() error {
	w.t.Helper()
	select {
	case err := <-w.done:
		return err
	case <-time.After(20 * time.Second):
		w.t.Fatalf("wizard did not finish; screen:\n%s", w.seen.String())
	}
	return nil
}

const (
	enter = "\r"
	down  = "\x1b[B"
)

// allowlistDefaultSteps take the allowlist scheme and its defaults, up to the limits.
func allowlistDefaultSteps(w *wizardRun) {
	w.step("What should init do?", enter) // write a policy
	allowlistSchemeSteps(w)
	limitSteps(w)
}

// allowlistSchemeSteps answer the allowlist scheme's questions with their defaults, from the
// scheme on.
func allowlistSchemeSteps(w *wizardRun) {
	for _, q := range []string{"Which sandbox scheme?", "Workspace", "Commands to allow", "More commands", "network access?"} {
		w.step(q, enter)
	}
}

// defaultPlaceSteps answer the questions after the limits with their defaults: stdio (no
// serve --http), no client, the policy at its default path.
func defaultPlaceSteps(w *wizardRun) {
	for _, q := range []string{"`serve --http` you start with this policy", "Configure which clients?", "Write the policy to"} {
		w.step(q, enter)
	}
}

// limitSteps answer the limits with their defaults.
func limitSteps(w *wizardRun) {
	for _, q := range []string{"Timeout per call", "Output cap per stream", "Memory per call", "Processes per call"} {
		w.step(q, enter)
	}
}

// goesOn answers the limits once the scheme's needs are met; or, when this build's serve cannot
// run the scheme at all, checks that init stopped saying so, and reports false.
func goesOn(w *wizardRun) bool {
	w.t.Helper()
	if w.expect("Timeout per call", "cannot run in this build") != "Timeout per call" {
		w.expect("nothing was written")
		if w.exit() == nil {
			w.t.Error("init exited 0 for a scheme this build cannot run")
		}
		return false
	}
	w.con.Send(enter)
	for _, q := range []string{"Output cap per stream", "Memory per call", "Processes per call"} {
		w.step(q, enter)
	}
	return true
}

// finishWrite picks a client, accepts the policy path and writes; then either the entry answered
// (verify declined, exit 0: true) or it could not start and nothing was written (false).
func finishWrite(w *wizardRun, client string) bool {
	w.t.Helper()
	w.step("`serve --http` you start with this policy", enter) // stdio
	w.step("Configure which clients?", client)
	w.step(client, " "+enter)
	w.step("Write the policy to", enter)
	w.step("Write them?", enter)
	if got := w.expect("on it now (audit", "does not start", "cannot run a call"); got != "on it now (audit" {
		w.expect("nothing was changed")
		w.step("What now?", "Quit"+enter) // the answers are kept until then
		if w.exit() == nil {
			w.t.Error("init exited 0 although the entry does not start")
		}
		return false
	}
	w.con.Send("n" + enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		w.t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
	}
	return true
}

// The wizard for each scheme. docker and e2b say what they need before asking, and check it
// before writing: no engine, no image, no API key each stop the wizard with nothing written; with
// everything in place the written entry must answer MCP, or nothing is written either.
func TestInitWizardPTY(t *testing.T) {
	policyPath := func(e *initEnv) string { return filepath.Join(e.config, "mcpsandbox", "policy.toml") }
	noWrites := func(t *testing.T, e *initEnv, cfg string) {
		t.Helper()
		for _, f := range []string{policyPath(e), cfg} {
			if _, err := os.Stat(f); err == nil {
				t.Errorf("%s was written", f)
			}
		}
	}
	t.Run("allowlist", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.step("Which sandbox scheme?", enter)
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", "python3"+enter)
		w.step("Keep python3 anyway?", "n"+enter)
		w.step("network access?", enter)
		w.step("Timeout per call", "20s"+enter)
		// a limit the policy would refuse is refused at its question, not after every other
		// answer with the wizard's exit (trial30 F1)
		w.step("Output cap per stream", "lots"+enter)
		w.step(`output cap "lots" is not a size`, enter)
		w.step("Memory per call", "0"+enter)
		w.step("is below 16MiB", enter)
		w.step("Processes per call", enter)
		if !finishWrite(w, "claude-code") {
			t.Fatalf("the allowlist entry does not start:\n%s", w.seen.String())
		}
		screen := w.seen.String()
		if !strings.Contains(screen, "These files will change") || !strings.Contains(screen, "(new file") {
			t.Errorf("no preview before writing:\n%s", screen)
		}
		// The preview summarises the policy: the commands on one line, no pins.
		if !regexp.MustCompile(`commands \(\d+, each pinned by sha256\): cat, cut`).MatchString(screen) || strings.Contains(screen, "sha256 = ") {
			t.Errorf("the preview is not a summary:\n%s", screen)
		}
		if !strings.Contains(screen, "local scope") || !strings.Contains(screen, "checked: the entry starts") {
			t.Errorf("init did not say the scope used or the check:\n%s", screen)
		}
		pb, err := os.ReadFile(policyPath(e))
		if err != nil || !strings.Contains(string(pb), `timeout          = "20s"`) || strings.Contains(string(pb), "python") {
			t.Fatalf("policy: %v\n%s", err, pb)
		}
		if cb, err := os.ReadFile(filepath.Join(e.home, ".claude.json")); err != nil || !strings.Contains(string(cb), policyPath(e)) {
			t.Fatalf("~/.claude.json: %v\n%s", err, cb)
		}
	})
	// A re-run starts from the policy there: jq, added the first time, stays; a changed limit
	// shows as - then +; a client already configured is preselected.
	t.Run("rerun", func(t *testing.T) {
		e := newInitEnv(t)
		if out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,jq", "--workspace", filepath.Join(e.home, "ws"), "--client", "cursor", "--yes"); code != 0 {
			t.Fatalf("first init: %s %s", out, stderr)
		}
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.expect("Starting from your policy")
		w.step("Which sandbox scheme?", enter)
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", enter)
		w.step("network access?", enter)
		w.step("Timeout per call", "20s"+enter)
		w.step("Output cap per stream", enter)
		w.step("Memory per call", enter)
		w.step("Processes per call", enter)
		w.step("`serve --http` you start with this policy", enter)
		w.step("Configure which clients?", enter) // cursor: detected, preselected
		w.step("Write the policy to", enter)
		w.expect("Write them?")
		screen := w.seen.String()
		pv := screen[strings.LastIndex(screen, "These files will change"):]
		if strings.Contains(pv, "-commands") || strings.Contains(pv, "+commands") {
			t.Errorf("the re-run changes the commands:\n%s", pv)
		}
		i, j := strings.Index(pv, "-limits: 30s"), strings.Index(pv, "+limits: 20s")
		if i < 0 || j < 0 || i > j {
			t.Errorf("the preview does not show - then + for the timeout:\n%s", pv)
		}
		w.con.Send(enter)
		w.step("on it now (audit", "n"+enter)
		w.expect("verify --policy")
		if err := w.exit(); err != nil {
			t.Fatal(err)
		}
		pb, _ := os.ReadFile(policyPath(e))
		if !regexp.MustCompile(`name\s+= "jq"`).Match(pb) || !strings.Contains(string(pb), `"20s"`) {
			t.Errorf("policy after the re-run:\n%s", pb)
		}
	})
	// A re-run whose policy allowlists an interpreter offers to keep it by default: Enter through
	// it leaves the file as it is (trial36 F11: "Keep python3 anyway?" defaulted to No and the
	// re-run dropped python3). Red under mutant init-wizard-drops-kept-interpreter.
	t.Run("rerun-keeps-interpreter", func(t *testing.T) {
		e := newInitEnv(t)
		if out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,python3", "--workspace", filepath.Join(e.home, "ws"), "--client", "cursor", "--yes"); code != 0 {
			t.Fatalf("first init: %s %s", out, stderr)
		}
		before, _ := os.ReadFile(policyPath(e))
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.expect("Starting from your policy")
		w.step("Which sandbox scheme?", enter)
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", enter)
		w.step("Keep python3 anyway? (Y/n)", enter)
		w.step("network access?", enter)
		limitSteps(w)
		defaultPlaceSteps(w)
		w.step("on it now (audit", "n"+enter) // nothing changes: nothing to confirm
		w.expect("verify --policy")
		if err := w.exit(); err != nil {
			t.Fatal(err)
		}
		if after, _ := os.ReadFile(policyPath(e)); string(after) != string(before) || !strings.Contains(string(after), "python3") {
			t.Errorf("a re-run taking every default changed the policy:\n%s\nwas\n%s\nscreen:\n%s", after, before, w.seen.String())
		}
	})
	// Only some hosts: presets ticked, a host typed (a URL first: refused with the fix), the list
	// in the preview and the file; a re-run shows it back and, taken as it is, changes nothing.
	t.Run("network-hosts", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.step("Which sandbox scheme?", enter)
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", enter)
		w.step("network access?", down+enter)                       // only these hosts
		w.step("Hosts commands may reach", " "+down+down+" "+enter) // pypi, github
		w.step("Other hosts", "https://api.example.com/v1"+enter)
		w.step(`is a URL: write the host only, e.g. "api.example.com"`, "api.example.com:443"+enter)
		limitSteps(w)
		defaultPlaceSteps(w)
		w.expect("Write them?")
		want := `["pypi.org", "files.pythonhosted.org", "github.com", "codeload.github.com", "objects.githubusercontent.com", "api.example.com:443"]`
		if screen := w.seen.String(); !strings.Contains(screen, "network "+want) {
			t.Errorf("the preview does not show the host list:\n%s", screen)
		}
		w.con.Send(enter)
		w.step("on it now (audit", "n"+enter)
		w.expect("verify --policy")
		if err := w.exit(); err != nil {
			t.Fatal(err)
		}
		p, err := policy.Load(policyPath(e))
		if err != nil || alsec.Of(p).Net().String() != want {
			t.Fatalf("policy: %v %v", err, p)
		}
		before, _ := os.ReadFile(policyPath(e))
		w = startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.expect("Starting from your policy")
		w.step("Which sandbox scheme?", enter)
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", enter)
		w.step("network access?", enter)
		w.step("Hosts commands may reach", enter)
		w.step("Other hosts", enter)
		limitSteps(w)
		defaultPlaceSteps(w)
		w.step("on it now (audit", "n"+enter) // nothing changes: nothing to confirm
		w.expect("verify --policy")
		if err := w.exit(); err != nil {
			t.Fatal(err)
		}
		screen := w.seen.String()
		if !strings.Contains(screen, "(api.example.com:443)") {
			t.Errorf("the re-run did not show the typed host back:\n%s", screen)
		}
		if after, _ := os.ReadFile(policyPath(e)); string(after) != string(before) {
			t.Errorf("a re-run taking every default changed the policy:\n%s\nwas\n%s", after, before)
		}
	})
	// No client picked: the wizard says how to add the entry by hand, or have init add it to a
	// client later (trial40 F10); no other flag advice.
	t.Run("no-client", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e)
		allowlistDefaultSteps(w)
		defaultPlaceSteps(w)
		w.step("Write them?", enter)
		w.step("on it now (audit", "n"+enter)
		w.expect("verify --policy")
		w.exit()
		screen := w.seen.String()
		later := "init --policy " + policyPath(e) + " --client ID ("
		if !strings.Contains(screen, "no client picked") || !strings.Contains(screen, later) ||
			strings.Count(screen, "--client") != 1 || strings.Contains(screen, "add --") {
			t.Errorf("no-client advice:\n%s", screen)
		}
	})
	dockerSteps := func(w *wizardRun, image string) {
		w.step("What should init do?", enter) // write a policy
		w.step("Which sandbox scheme?", down+enter)
		w.expect("needs a running Docker engine")
		w.step("Image", image+enter)
		w.step("Host directory to mount", enter)
		w.step("network access?", enter) // none
		w.step("Containers to keep pre-started", "2"+enter)
		w.step("Container reuse", down+enter) // session
		w.step("Container runtime", enter)
	}
	t.Run("docker-writable-explained", func(t *testing.T) {
		img := dockerTestImage(t)
		e := newInitEnv(t)
		ws := mkdir(t, e.home, "results", 0o755)
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		w.step("Which sandbox scheme?", down+enter)
		w.step("Image", img+enter)
		w.step("Host directory to mount", ws+enter)
		// Offered with what it means, before the answer: what is checked, what lands.
		w.expect("Each call's writes are checked before they reach this machine")
		w.con.Send(enter) // no, the default
		w.expect("network access?")
		w.interrupt()
		w.exit()
		noWrites(t, e, filepath.Join(e.home, ".cursor", "mcp.json"))
	})
	t.Run("docker-no-engine", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e, "DOCKER_HOST=unix://"+filepath.Join(e.home, "no-engine.sock"))
		dockerSteps(w, "")
		w.step("What now?", "Quit"+enter)
		w.expect("Nothing was written")
		if w.exit() == nil {
			t.Error("exit 0 without an engine")
		}
		noWrites(t, e, filepath.Join(e.home, ".cursor", "mcp.json"))
	})
	t.Run("docker-engine", func(t *testing.T) {
		img := dockerTestImage(t)
		e := newInitEnv(t)
		// An image the engine does not have: init offers the pull; declined, the answers stay:
		// "change my answers" asks again with each answer as the default (the pool of 2 given
		// before is kept by Enter), and with an image the engine has the wizard goes on.
		w := startWizard(t, e)
		dockerSteps(w, "mcpsandbox-init-absent:none")
		w.step("Pull it now?", "n"+enter)
		w.expect("and try again, or change your answers: answer 'Image' with an image the engine has (it has ") // the images the engine holds: offline, the way on, in the menu's words (not --image, "run init again")
		w.step("What now?", down+enter)                                                                         // change my answers
		w.step("(mcpsandbox-init-absent:none)", img+enter)                                                      // the image given is the default
		w.step("Host directory to mount", enter)
		w.step("network access?", enter)
		w.step("Containers to keep pre-started", enter)
		w.step("Container reuse", enter) // session, kept
		w.step("Container runtime", enter)
		if goesOn(w) && finishWrite(w, "cursor") {
			pb, _ := os.ReadFile(policyPath(e))
			if !strings.Contains(string(pb), `pool       = 2`) || !strings.Contains(string(pb), img) || !strings.Contains(string(pb), `reuse      = "session"`) {
				t.Errorf("the answers given before the failed check were lost:\n%s", pb)
			}
		}
		e = newInitEnv(t)
		// An image it has: the questions go on (or this build's serve cannot run docker, and
		// init stops), and the entry answers MCP or nothing is written.
		w = startWizard(t, e)
		dockerSteps(w, img)
		if !goesOn(w) {
			noWrites(t, e, filepath.Join(e.home, ".cursor", "mcp.json"))
			return
		}
		if finishWrite(w, "cursor") {
			pb, _ := os.ReadFile(policyPath(e))
			if !strings.Contains(string(pb), `pool       = 2`) {
				t.Errorf("policy:\n%s", pb)
			}
		} else {
			noWrites(t, e, filepath.Join(e.home, ".cursor", "mcp.json"))
		}
	})
	t.Run("e2b", func(t *testing.T) {
		e := newInitEnv(t)
		steps := func(w *wizardRun, key bool) {
			w.step("What should init do?", enter) // write a policy
			w.step("Which sandbox scheme?", down+down+enter)
			w.expect("API key in an environment variable")
			w.step("Environment variable holding your E2B API key", enter)
			if key {
				w.step("E2B template", enter)
				w.step("Sandbox reuse", down+enter)
			}
		}
		w := startWizard(t, e, "E2B_API_KEY=")
		steps(w, false)
		// checked right after the key's question, not after the template and reuse
		// (trial37 F14, wizard-needs-checked-late); no "try again": a key exported elsewhere
		// never reaches this init's environment (wizard-retry-env); change the answers
		// (another variable's name) or quit
		if got := w.expect("What now?", "E2B template"); got != "What now?" {
			t.Fatalf("the key was not checked right after its question:\n%s", w.seen.String())
		}
		w.expect("Quit (nothing is written)")
		if menu := w.seen.String()[strings.LastIndex(w.seen.String(), "What now?"):]; strings.Contains(menu, "Try again") || !strings.Contains(menu, "Change my answers") {
			t.Errorf("the menu for a missing key:\n%s", menu)
		}
		w.con.Send("Quit" + enter)
		w.expect("Nothing was written")
		if w.exit() == nil {
			t.Error("exit 0 without the API key")
		}
		noWrites(t, e, filepath.Join(e.home, ".codex", "config.toml"))
		fe, _ := e2bInitEnv(t, e2bKey) // a local E2B server: init's proof call runs against it
		w = startWizard(t, e, fe.env[len(fe.env)-4:]...)
		steps(w, true)
		if !goesOn(w) {
			noWrites(t, e, filepath.Join(e.home, ".codex", "config.toml"))
			return
		}
		if finishWrite(w, "codex") {
			pb, _ := os.ReadFile(policyPath(e))
			if !strings.Contains(string(pb), `reuse           = "call"`) {
				t.Errorf("policy:\n%s", pb)
			}
		} else {
			noWrites(t, e, filepath.Join(e.home, ".codex", "config.toml"))
			t.Error("the e2b entry did not pass init's proof against the local E2B server")
		}
	})
}

// dockerTestImage is a local image for the wizard's docker path: MCPSANDBOX_TEST_IMAGE, or an
// empty image imported here (no registry is reachable). Without an engine the test skips, loudly,
// except under CI=true.
func dockerTestImage(t *testing.T) string {
	t.Helper()
	sock := "/var/run/docker.sock"
	if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
		sock = strings.TrimPrefix(h, "unix://")
	}
	cl := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, "unix", sock)
		}}}
	resp, err := cl.Get("http://docker/version")
	if err != nil {
		testenv.Skip(t, "no Docker engine answers at %s (%v): the wizard's docker path with an engine is not tested here", sock, err) // fails under CI=true
	}
	resp.Body.Close()
	// init proves an entry through a real call, so the image needs a shell: the suite's own
	// (scripts/build-test-image.sh builds it offline; MCPSANDBOX_TEST_IMAGE names another).
	img := dockerImage()
	resp, err = cl.Get("http://docker/images/" + img + "/json")
	if err != nil || resp.StatusCode != http.StatusOK {
		if err == nil {
			resp.Body.Close()
		}
		testenv.Skip(t, "the test image %s is missing (build it with sh scripts/build-test-image.sh): the docker path of init is not tested here", img) // fails under CI=true
	}
	resp.Body.Close()
	return img
}

// The binary init runs from is what the entries run when --command is not given: one another
// user owns (root running `sudo ~/bin/mcpsandbox init`) is refused as --command's is, not only
// warned of, and nothing is written (trial32 F27).
func TestInitRefusesRunningFromABinaryAnotherUserOwns(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to give the binary to another user")
	}
	e := newInitEnv(t)
	dir := filepath.Join(t.TempDir(), "bin")
	os.MkdirAll(dir, 0o755)
	bin := filepath.Join(dir, "mcpsandbox")
	b, err := os.ReadFile(binPath)
	if err != nil {
		t.Fatal(err)
	}
	write(t, bin, string(b), 0o755)
	os.Chown(bin, 4321, 4321)
	cmd := exec.Command(bin, "init", "--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(e.home, "ws"), "--client", "cursor", "--yes")
	cmd.Env, cmd.Dir = e.env, e.project
	out, stderr, code := runCmd(t, cmd)
	if code == 0 || !strings.Contains(stderr, "is owned by uid 4321") || !strings.Contains(stderr, "--command PATH") {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.home, ".cursor", "mcp.json")); err == nil {
		t.Error("Cursor's config was written")
	}
}

// When what the scheme needs is missing, the wizard offers another scheme, every other answer
// kept; where trying again cannot help (a key exported elsewhere never reaches this init) it is
// preselected, and choosing it asks the scheme again and that scheme's questions, then goes on
// (trial33 F10: the only way to another scheme was Quit, losing every answer). Red with mutant
// wizard-needs-no-other-scheme.
func TestInitWizardNeedsChooseAnotherScheme(t *testing.T) {
	e := newInitEnv(t)
	w := startWizard(t, e, "E2B_API_KEY=")
	w.step("What should init do?", enter) // write a policy
	w.step("Which sandbox scheme?", down+down+enter)
	w.step("Environment variable holding your E2B API key", enter) // checked at once
	w.expect("What now?")
	w.expect("Quit (nothing is written)")
	if menu := w.seen.String()[strings.LastIndex(w.seen.String(), "What now?"):]; !strings.Contains(menu, "> Choose another scheme (your other answers are kept)") {
		t.Fatalf("another scheme is not offered first for a missing key:\n%s", menu)
	}
	w.con.Send(enter)
	w.step("Which sandbox scheme?", enter) // the next one offered: allowlist
	w.step("Workspace", enter)
	w.step("Commands to allow", enter)
	w.step("More commands", enter)
	w.step("network access?", enter)
	limitSteps(w)
	if !finishWrite(w, "cursor") {
		t.Fatalf("the allowlist entry did not start:\n%s", w.seen.String())
	}
	if b, err := os.ReadFile(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err != nil || !strings.Contains(string(b), `scheme  = "allowlist"`) {
		t.Errorf("policy: %v\n%s", err, b)
	}
}

// A re-run that detours through another scheme and comes back to the policy's own starts from the
// policy again (trial35 F14: back on allowlist every built-in command was preselected, and init
// asked to replace the policy as a foreign file; Enter throughout widened the allowlist). Red with
// mutant wizard-detour-forgets-base.
func TestInitWizardDetourKeepsThePolicy(t *testing.T) {
	e := newInitEnv(t)
	if out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,jq", "--workspace", filepath.Join(e.home, "ws"), "--client", "cursor", "--yes"); code != 0 {
		t.Fatalf("first init: %s %s", out, stderr)
	}
	w := startWizard(t, e, "E2B_API_KEY=")
	w.step("What should init do?", enter) // write a policy
	w.expect("Starting from your policy")
	w.step("Which sandbox scheme?", down+down+enter)               // e2b, with no key
	w.step("Environment variable holding your E2B API key", enter) // checked at once
	w.step("What now?", enter)                                     // choose another scheme
	w.step("Which sandbox scheme?", enter)                         // the next one offered: allowlist, the policy's
	w.step("Workspace", enter)
	w.step("Commands to allow", enter)
	w.expect("More commands")
	if q := w.seen.String()[strings.LastIndex(w.seen.String(), "Commands to allow"):]; !regexp.MustCompile(`sha256\): wc, jq\s`).MatchString(q) {
		t.Errorf("back on the policy's scheme, Enter took other commands than the policy's (wc, jq):\n%s", q)
	}
	w.con.Send(enter)
	w.step("network access?", enter)
	limitSteps(w)
	w.step("`serve --http` you start with this policy", enter)
	w.step("Configure which clients?", enter) // cursor: preselected
	w.step("Write the policy to", enter)
	// the same answers: the same policy, nothing to write (a foreign file would be asked about)
	if got := w.expect("already configured, nothing changed", "Write them?", "exists. Replace it"); got != "already configured, nothing changed" {
		t.Fatalf("the detour changed the policy or took it for a foreign file (%q):\n%s", got, w.seen.String())
	}
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatal(err)
	}
}
