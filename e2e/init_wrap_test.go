package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
)

// wrapInitEnv is an initEnv whose Claude Code config (local scope: ~/.claude.json under the
// project's path) holds three stdio servers and an HTTP one. Each server is wrap's own test
// server (e2e/testdata/wrapserver); wrapBin, what the wrapped entries run, is this build's
// mcpsandbox: the real `mcpsandbox wrap`.
type wrapInitEnv struct {
	*initEnv
	config, text, wrapBin string
}

func newWrapInitEnv(t *testing.T) *wrapInitEnv {
	t.Helper()
	e := &wrapInitEnv{initEnv: newInitEnv(t)}
	srv := buildWrapServer(t)
	os.MkdirAll(filepath.Join(e.home, "bin"), 0o755)
	e.wrapBin = binPath
	proj, _ := filepath.EvalSymlinks(e.project)
	q := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	e.text = "{\n  \"numStartups\": 4,\n  \"projects\": {\n    " + q(proj) + ": {\n      \"allowedTools\": [],\n      \"mcpServers\": {\n" +
		"        \"tools\": {\n          \"type\": \"stdio\",\n          \"command\": " + q(srv) + ",\n          \"args\": [\"--stdio\", \"a b\"],\n          \"env\": {\"DEMO_TOKEN\": \"${DEMO_TOKEN}\"}\n        },\n" +
		"        \"tools-b\": {\"type\": \"stdio\", \"command\": " + q(srv) + ", \"args\": []},\n" +
		"        \"remote\": {\"type\": \"http\", \"url\": \"https://example.com/mcp\"},\n" +
		"        \"tools-c\": {\n          \"command\": " + q(srv) + ",\n          \"args\": [\"-v\"],\n          \"env\": {}\n        }\n" +
		"      }\n    }\n  }\n}\n"
	e.config = filepath.Join(e.home, ".claude.json")
	if err := os.WriteFile(e.config, []byte(e.text), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// The acceptance path of init --wrap: the servers listed (the HTTP one left, with why), all
// wrapped by flags, each proven by starting it as Claude Code would, the entries rewritten as
// the contract says, and init --unwrap leaving the file byte-identical.
func TestInitWrapUnwrap(t *testing.T) {
	e := newWrapInitEnv(t)
	out, stderr, code := e.run(t, "", "--wrap")
	if code != 0 || !strings.Contains(out, "tools-b") || !strings.Contains(out, "remote           left: it is reached over HTTP/SSE") {
		t.Fatalf("init --wrap without a terminal does not list the servers: exit %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = e.run(t, "", "--wrap", "all", "--client", "claude-code")
	// the --explain-denials hint says where its lines appear: run by hand, wrap waits for MCP on
	// stdin and shows nothing (trial35 F15)
	if code != 0 || strings.Count(out, "wrapped: ") != 3 || strings.Count(out, "checked: the wrapped entry starts") != 3 ||
		!strings.Contains(stderr, `left: "remote"`) || !strings.Contains(out, `add "--explain-denials" to the wrapped entry's args`) {
		t.Fatalf("init --wrap all: exit %d\n%s\n%s", code, out, stderr)
	}
	b, _ := os.ReadFile(e.config)
	var cfg struct {
		Projects map[string]struct {
			MCPServers map[string]struct {
				Type    string
				Command string
				Args    []string
				Env     map[string]string
			}
		}
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	proj, _ := filepath.EvalSymlinks(e.project)
	for n, orig := range map[string][]string{"tools": {"--stdio", "a b"}, "tools-b": {}, "tools-c": {"-v"}} {
		s := cfg.Projects[proj].MCPServers[n]
		if s.Command != e.wrapBin || len(s.Args) < 5 || s.Args[0] != "wrap" || s.Args[1] != "--policy" || s.Args[3] != "--" ||
			!strings.HasSuffix(s.Args[4], "wrapserver") || !slices.Equal(s.Args[5:], orig) {
			t.Errorf("%s: %+v", n, s)
		}
		if _, err := os.Stat(s.Args[2]); err != nil {
			t.Errorf("%s: its policy: %v", n, err)
		}
	}
	if s := cfg.Projects[proj].MCPServers["tools"]; s.Type != "stdio" || s.Env["DEMO_TOKEN"] != "${DEMO_TOKEN}" {
		t.Errorf("tools lost its other keys: %+v", s)
	}
	pb, _ := os.ReadFile(cfg.Projects[proj].MCPServers["tools"].Args[2])
	if !strings.Contains(string(pb), `env     = ["DEMO_TOKEN"]`) || !strings.Contains(string(pb), "network = false") {
		t.Errorf("the policy of tools:\n%s", pb)
	}
	// Listed again: wrapped, with its policy.
	if out, _, _ := e.run(t, "", "--wrap"); !strings.Contains(out, "left: it runs through mcpsandbox wrap already") {
		t.Errorf("a wrapped entry is not listed as such:\n%s", out)
	}
	// The list names the --client value that reaches each entry; another client's or scope's
	// names them and, with names asked for, exits 1 (trial34 F3: "(vscode)", nothing restored, 0).
	if out, _, _ := e.run(t, "", "--unwrap"); !strings.Contains(out, "(--client claude-code)") {
		t.Errorf("the unwrap list:\n%s", out)
	}
	out, _, code = e.run(t, "", "--unwrap", "tools", "--client", "claude-code:user")
	if code != 1 || !strings.Contains(out, `no entry wrapped by init --wrap for --client claude-code:user; wrapped: `) || !strings.Contains(out, `"tools" (--client claude-code)`) {
		t.Errorf("--unwrap tools --client claude-code:user: exit %d\n%s", code, out)
	}
	out, stderr, code = e.run(t, "", "--unwrap", "all")
	if code != 0 || strings.Count(out, "restored: ") != 3 {
		t.Fatalf("init --unwrap all: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(e.config); string(b) != e.text {
		t.Errorf("after init --wrap and --unwrap ~/.claude.json differs:\n%s\nwant:\n%s", b, e.text)
	}
}

// A name that is not there is refused with the list; a wrapped entry that does not answer is
// put back and init exits 1 saying why.
func TestInitWrapRefusals(t *testing.T) {
	e := newWrapInitEnv(t)
	out, stderr, code := e.run(t, "", "--wrap", "nosuch")
	if code == 0 || !strings.Contains(stderr, `no server named "nosuch"`) || !strings.Contains(stderr, "tools-b") {
		t.Errorf("an unknown name: exit %d\n%s\n%s", code, out, stderr)
	}
	// A stand-in that refuses to start the server: the proof fails, nothing stays changed.
	bad := filepath.Join(e.home, "bin", "mcpsandbox-broken")
	os.WriteFile(bad, []byte("#!/bin/sh\necho 'wrap: cannot apply Landlock' >&2\nexit 1\n"), 0o755)
	out, stderr, code = e.run(t, "", "--wrap", "tools", "--command", bad)
	if code != 1 || !strings.Contains(out, "not wrapped") || !strings.Contains(out, "cannot apply Landlock") || !strings.Contains(out, "put back") {
		t.Errorf("a wrapped entry that does not start: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(e.config); string(b) != e.text {
		t.Errorf("the config changed:\n%s", b)
	}
	// The real wrap, on a server that needs what its generated policy does not give (mcpsandbox's
	// own serve, its workspace in the user's HOME: read and write empty by default): put back,
	// with the server's own words, and its policy kept to be widened.
	srv := filepath.Join(e.home, "bin", "mcp-server-tools")
	os.Symlink(binPath, srv)
	ws := filepath.Join(e.home, "ws-real")
	os.MkdirAll(ws, 0o755)
	desktop := filepath.Join(e.initEnv.config, "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(desktop), 0o755)
	dtext := `{"mcpServers": {"tools": {"command": "` + srv + `", "args": ["serve", "--default", "--workspace", "` + ws + `"]}}}`
	os.WriteFile(desktop, []byte(dtext), 0o644)
	out, stderr, code = e.run(t, "", "--wrap", "tools", "--client", "claude-desktop")
	if code != 1 || !strings.Contains(out, "not wrapped") || !strings.Contains(out, "workspace "+ws) || !strings.Contains(out, "its policy stays") {
		t.Errorf("a server the generated policy cannot run: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(desktop); string(b) != dtext {
		t.Errorf("Claude Desktop's config changed:\n%s", b)
	}
}

// On a terminal, init --wrap asks which servers (a multi-select), and init --unwrap which to
// restore.
func TestInitWrapPTY(t *testing.T) {
	e := newWrapInitEnv(t)
	w := startInitPTY(t, e.initEnv, "--wrap")
	w.step("Wrap which servers", " "+enter) // the first: tools
	w.expect("wrapped: \"tools\"")
	if err := w.exit(); err != nil {
		t.Fatal(err)
	}
	w = startInitPTY(t, e.initEnv, "--unwrap")
	w.step("Restore which entries", " "+enter)
	w.expect("restored: ")
	if err := w.exit(); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(e.config); string(b) != e.text {
		t.Errorf("after wrap and unwrap on a terminal the config differs:\n%s", b)
	}
}

// startInitPTY runs init with args on a pseudo-terminal (startWizard, with arguments).
func startInitPTY(t *testing.T, e *initEnv, args ...string) *wizardRun {
	t.Helper()
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	term := vt10x.New(vt10x.WithWriter(pts))
	con, err := expect.NewConsole(expect.WithStdin(ptm), expect.WithStdout(term), expect.WithCloser(ptm, pts),
		expect.WithDefaultTimeout(60*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	w := &wizardRun{t: t, con: con, done: make(chan error, 1)}
	w.cmd = exec.Command(binPath, append([]string{"init"}, args...)...)
	w.cmd.Env, w.cmd.Dir = append(e.env, "TERM=xterm"), e.project
	w.cmd.Stdin, w.cmd.Stdout, w.cmd.Stderr = con.Tty(), con.Tty(), con.Tty()
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.done <- w.cmd.Wait() }()
	t.Cleanup(func() {
		w.cmd.Process.Kill()
		con.Close()
		if t.Failed() {
			t.Logf("screen:\n%s", w.seen.String())
		}
	})
	return w
}

// Entries init --wrap rewrote work in real clients: Claude Code's own `mcp list` starts each
// (local scope, the project's key in ~/.claude.json) and reports it Connected, as Gemini CLI's
// does for its entry (started with its environment less secrets, the entry naming one), and the
// official MCP Inspector's CLI lists the tools through a wrapped Claude Desktop entry.
func TestInitWrapInRealClients(t *testing.T) {
	claude, gemini, inspector := clientCLI(t, "claude"), clientCLI(t, "gemini"), clientCLI(t, "mcp-inspector")
	e := newWrapInitEnv(t)
	// Gemini CLI (its environment less secrets; a trusted folder) with one server in its user config.
	settings := filepath.Join(e.home, ".gemini", "settings.json")
	os.MkdirAll(filepath.Dir(settings), 0o755)
	gtext := "{\n  \"mcpServers\": {\"gtools\": {\"command\": \"" + buildWrapServer(t) + "\", \"env\": {\"DEMO_KEY\": \"${DEMO_KEY}\"}}}\n}\n"
	os.WriteFile(settings, []byte(gtext), 0o644)
	trust, _ := json.Marshal(map[string]string{e.project: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(e.home, ".gemini", "trustedFolders.json"), trust, 0o600)
	desktop := filepath.Join(e.initEnv.config, "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(desktop), 0o755)
	dtext := `{"mcpServers": {"tools": {"command": "` + buildWrapServer(t) + `", "args": []}}}`
	os.WriteFile(desktop, []byte(dtext), 0o644)
	for _, c := range []string{"claude-code", "claude-desktop", "gemini"} {
		if out, stderr, code := e.run(t, "", "--wrap", "all", "--client", c); code != 0 {
			t.Fatalf("init --wrap all --client %s: exit %d\n%s\n%s", c, code, out, stderr)
		}
	}
	cmd := exec.Command(claude, "mcp", "list")
	cmd.Env, cmd.Dir = e.env, e.project
	out, stderr, _ := runCmdTimeout(t, cmd, 120*time.Second)
	for _, n := range []string{"tools", "tools-b", "tools-c"} {
		ok := false
		for _, l := range strings.Split(out, "\n") {
			if strings.HasPrefix(l, n+": "+e.wrapBin+" wrap --policy ") && strings.Contains(l, "Connected") && !strings.Contains(l, "Disconnected") {
				ok = true
			}
		}
		if !ok {
			t.Errorf("claude mcp list does not show the wrapped %s connected:\n%s\n%s", n, out, stderr)
		}
	}
	cmd = exec.Command(gemini, "mcp", "list")
	cmd.Env, cmd.Dir = append(e.env, "DEMO_KEY=k"), e.project
	out, stderr, _ = runCmdTimeout(t, cmd, 120*time.Second)
	if got := out + stderr; !strings.Contains(got, "gtools") || !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
		t.Errorf("gemini mcp list does not show the wrapped gtools connected:\n%s", got)
	}
	cmd = exec.Command(inspector, "--cli", "--config", desktop, "--server", "tools", "--method", "tools/list")
	cmd.Env, cmd.Dir = append(e.env, "MCP_INSPECTOR_SECRET_STORE=memory"), e.project
	out, stderr, code := runCmdTimeout(t, cmd, 90*time.Second)
	if code != 0 || !strings.Contains(out, "secret_dump") {
		t.Errorf("the Inspector's tools/list through the wrapped entry: exit %d\n%s\n%s", code, out, stderr)
	}
	if out, stderr, code := e.run(t, "", "--unwrap", "all"); code != 0 {
		t.Fatalf("init --unwrap all: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, _ := os.ReadFile(settings); string(b) != gtext {
		t.Errorf("Gemini CLI's settings after unwrap:\n%s", b)
	}
	if b, _ := os.ReadFile(desktop); string(b) != dtext {
		t.Errorf("Claude Desktop's config after unwrap:\n%s", b)
	}
	// Claude Code re-rendered ~/.claude.json when it saved it (its own indentation, one array
	// item a line): each entry is still restored, to its original bytes, its keys kept.
	b, _ := os.ReadFile(e.config)
	for n, want := range map[string]string{
		"tools":   "\"tools\": {\n          \"type\": \"stdio\",\n",
		"tools-b": "\"tools-b\": {\"type\": \"stdio\", \"command\": ",
		"tools-c": "\"tools-c\": {\n          \"command\": ",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s not restored byte for byte into Claude Code's re-rendered file:\n%s\nwant in it:\n%s", n, b, want)
		}
	}
	if !strings.Contains(string(b), "firstStartTime") {
		t.Errorf("Claude Code's own keys are gone:\n%s", b)
	}
}
