package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	expect "github.com/Netflix/go-expect"
	"github.com/creack/pty"
	"github.com/hinshun/vt10x"
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
	if err != nil || pol.Allowlist.Workspace != ws || len(pol.Allowlist.Commands) != 2 {
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
	if err != nil || len(tools.Tools) != 1 || tools.Tools[0].Name != "run_allowed_command" {
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

// The real wizard through a pseudo-terminal, as survey's own tests drive it: one run per scheme.
func TestInitWizardPTY(t *testing.T) {
	type step struct{ expect, send string }
	const (
		enter = "\r"
		down  = "\x1b[B"
	)
	cases := []struct {
		name   string
		steps  []step
		policy string // a line the policy must hold
		config string // the client config written, relative to the project or home
	}{
		{"allowlist", []step{
			{"Which sandbox scheme?", enter},
			{"Workspace", enter},
			{"Commands to allow", enter},
			{"More commands", "python3" + enter},
			{"Keep python3 anyway?", "n" + enter},
			{"network access?", enter},
			{"Timeout per call", "20s" + enter},
			{"Output cap per stream", enter},
			{"Memory per call", enter},
			{"Processes per call", enter},
			{"Configure which clients?", "claude-code"},
			{"claude-code", " " + enter},
			{"Write the policy to", enter},
			{"Write them?", enter},
			{"Run `mcpsandbox verify`", "n" + enter},
		}, `timeout          = "20s"`, ".mcp.json"},
		{"docker", []step{
			{"Which sandbox scheme?", down + enter},
			{"Image:", enter},
			{"Host directory to mount", enter},
			{"Containers to keep pre-started", "2" + enter},
			{"Timeout per call", enter},
			{"Output cap per stream", enter},
			{"Memory per call", enter},
			{"Processes per call", enter},
			{"Configure which clients?", "cursor"},
			{"cursor", " " + enter},
			{"Write the policy to", enter},
			{"Write them?", enter},
			{"Run `mcpsandbox verify`", "n" + enter},
		}, `pool       = 2`, "home/.cursor/mcp.json"},
		{"e2b", []step{
			{"Which sandbox scheme?", down + down + enter},
			{"E2B template", enter},
			{"Environment variable holding your E2B API key", enter},
			{"Sandbox reuse", down + enter},
			{"Timeout per call", enter},
			{"Output cap per stream", enter},
			{"Memory per call", enter},
			{"Processes per call", enter},
			{"Configure which clients?", "codex"},
			{"codex", " " + enter},
			{"Write the policy to", enter},
			{"Write them?", enter},
			{"Run `mcpsandbox verify`", "n" + enter},
		}, `reuse           = "call"`, "home/.codex/config.toml"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newInitEnv(t)
			// survey's own test rig: a vt10x terminal answers the prompts' cursor queries.
			ptm, pts, err := pty.Open()
			if err != nil {
				t.Fatal(err)
			}
			term := vt10x.New(vt10x.WithWriter(pts))
			con, err := expect.NewConsole(expect.WithStdin(ptm), expect.WithStdout(term), expect.WithCloser(ptm, pts),
				expect.WithDefaultTimeout(15*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			defer con.Close()
			cmd := exec.Command(binPath, "init")
			cmd.Env, cmd.Dir = append(e.env, "TERM=xterm"), e.project
			cmd.Stdin, cmd.Stdout, cmd.Stderr = con.Tty(), con.Tty(), con.Tty()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			var seen strings.Builder
			for _, s := range c.steps {
				got, err := con.ExpectString(s.expect)
				seen.WriteString(got)
				if err != nil {
					cmd.Process.Kill()
					t.Fatalf("waiting for %q: %v\nscreen so far:\n%s", s.expect, err, seen.String())
				}
				con.Send(s.send)
			}
			// Drain what the wizard prints last ("wrote …", "next: …") so it can exit.
			got, _ := con.ExpectString("next: mcpsandbox verify")
			seen.WriteString(got)
			select {
			case err := <-done:
				if err != nil {
					t.Fatalf("wizard exited: %v", err)
				}
			case <-time.After(15 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("wizard did not finish; screen:\n%s", seen.String())
			}
			if !strings.Contains(seen.String(), "These files will change") || !strings.Contains(seen.String(), "(new file)") {
				t.Errorf("no preview before writing:\n%s", seen.String())
			}
			pb, err := os.ReadFile(filepath.Join(e.config, "mcpsandbox", "policy.toml"))
			if err != nil || !strings.Contains(string(pb), c.policy) {
				t.Fatalf("policy: %v\n%s", err, pb)
			}
			if c.name == "allowlist" && strings.Contains(string(pb), "python") {
				t.Error("python3 kept after answering no")
			}
			cfgPath := filepath.Join(e.project, c.config)
			if strings.HasPrefix(c.config, "home/") {
				cfgPath = filepath.Join(e.home, strings.TrimPrefix(c.config, "home/"))
			}
			cb, err := os.ReadFile(cfgPath)
			if err != nil || !strings.Contains(string(cb), "serve") || !strings.Contains(string(cb), filepath.Join(e.config, "mcpsandbox", "policy.toml")) {
				t.Fatalf("client config %s: %v\n%s", cfgPath, err, cb)
			}
		})
	}
}
