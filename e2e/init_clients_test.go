package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// e2bInitEnv is an init environment whose E2B variables point at a local E2B server holding key.
func e2bInitEnv(t *testing.T, key string) (*initEnv, *e2bfake.Server) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("SKIPPED LOUDLY: the local E2B server runs on Linux only")
	}
	fake, err := e2bfake.New(e2bfake.Options{APIKey: e2bKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fake.Close() })
	e := newInitEnv(t)
	e.env = append(e.env, "E2B_API_KEY="+key, "E2B_API_URL="+fake.URL(), "E2B_SANDBOX_URL="+fake.URL(), "E2B_DOMAIN="+fake.Domain())
	return e, fake
}

// An e2b entry for Gemini CLI and Codex, which do not pass a server the key's variable by
// themselves: init names the variables in each client's own syntax (never the key), proves the
// entry with the environment each client gives it through a real call against the local E2B
// server, and a wrong key is refused before anything is written.
func TestInitE2BEntryNamesTheKeyForEachClient(t *testing.T) {
	e, _ := e2bInitEnv(t, e2bKey)
	out, stderr, code := e.run(t, "", "--scheme", "e2b", "--client", "gemini", "--client", "codex", "--client", "cursor", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	for _, who := range []string{"Gemini CLI", "Codex CLI", "Cursor"} {
		if !strings.Contains(out, "runs a call (run_command), in ") || !strings.Contains(out, "with the environment "+who+" gives it") {
			t.Errorf("init did not say it ran a call with %s's environment:\n%s", who, out)
		}
	}
	vars := []string{"E2B_API_KEY", "E2B_API_URL", "E2B_SANDBOX_URL", "E2B_DOMAIN"}
	for file, ref := range map[string]string{".gemini/settings.json": "${%s}", ".cursor/mcp.json": "${env:%s}"} {
		b, err := os.ReadFile(filepath.Join(e.home, file))
		var doc struct {
			MCPServers map[string]struct{ Env map[string]string }
		}
		if err != nil || json.Unmarshal(b, &doc) != nil {
			t.Fatalf("%s: %v\n%s", file, err, b)
		}
		for _, v := range vars {
			if got, want := doc.MCPServers["sandbox"].Env[v], strings.Replace(ref, "%s", v, 1); got != want {
				t.Errorf("%s: env %s = %q, want %q", file, v, got, want)
			}
		}
		if strings.Contains(string(b), e2bKey) {
			t.Errorf("%s holds the key itself", file)
		}
	}
	b, _ := os.ReadFile(filepath.Join(e.home, ".codex", "config.toml"))
	var codex struct {
		MCPServers map[string]struct {
			EnvVars []string `toml:"env_vars"`
		} `toml:"mcp_servers"`
	}
	if err := toml.Unmarshal(b, &codex); err != nil || strings.Join(codex.MCPServers["sandbox"].EnvVars, ",") != strings.Join(vars, ",") || strings.Contains(string(b), e2bKey) {
		t.Errorf("codex config: %v\n%s", err, b)
	}

	bad, _ := e2bInitEnv(t, "e2b_wrong0c0ffee0c0ffee0c0ffee0c0ffee0c0ffee")
	out, stderr, code = bad.run(t, "", "--scheme", "e2b", "--client", "gemini", "--yes")
	if code == 0 || !strings.Contains(stderr, "cannot run a call as Gemini CLI starts it") || !strings.Contains(stderr, "run_command") ||
		!strings.Contains(stderr, "nothing was changed") {
		t.Errorf("a key E2B refuses: exit %d\n%s\n%s", code, out, stderr)
	}
	nothingWritten(t, bad, filepath.Join(bad.home, ".gemini", "settings.json"))
}

// A docker workspace that does not exist: the engine would refuse every call's mount, so init
// refuses before writing and says how to fix it.
func TestInitRefusesAMissingDockerWorkspace(t *testing.T) {
	img := dockerTestImage(t)
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "not-there")
	out, stderr, code := e.run(t, "", "--scheme", "docker", "--image", img, "--docker-workspace", ws, "--client", "gemini", "--yes")
	if code == 0 || !strings.Contains(stderr, "the docker workspace "+ws+" does not exist") || !strings.Contains(stderr, "mkdir -p "+ws) {
		t.Errorf("exit %d\n%s\n%s", code, out, stderr)
	}
	nothingWritten(t, e, filepath.Join(e.home, ".gemini", "settings.json"))
}

// A workspace the policy makes writable, but which a program in the container cannot write (a
// directory root owns, where containers run as nobody; here one nobody may not write): init's
// proof creates and removes a file there, so init refuses with the fix and writes nothing. Given
// to a user who may write it, the same init passes, and the workspace is left as it was.
func TestInitRefusesAnUnwritableDockerWorkspace(t *testing.T) {
	img := dockerTestImage(t)
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ws")
	if err := os.Mkdir(ws, 0o555); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ws, 0o555)
	args := []string{"--scheme", "docker", "--image", img, "--docker-workspace", ws, "--docker-workspace-writable", "--client", "gemini", "--yes"}
	out, stderr, code := e.run(t, "", args...)
	if code == 0 || !strings.Contains(stderr, "could not create a file in it") || !strings.Contains(stderr, "chown -R 65534:65534 "+ws) {
		t.Errorf("init of an unwritable workspace: exit %d\n%s\n%s", code, out, stderr)
	}
	nothingWritten(t, e, filepath.Join(e.home, ".gemini", "settings.json"))
	os.Chmod(ws, 0o755)
	if os.Geteuid() == 0 {
		os.Chown(ws, 65534, 65534)
	}
	if out, stderr, code := e.run(t, "", args...); code != 0 {
		t.Fatalf("init of a writable workspace: exit %d\n%s\n%s", code, out, stderr)
	}
	if ents, _ := os.ReadDir(ws); len(ents) != 0 {
		t.Errorf("init's proof left %v in the workspace", ents)
	}
}

// nothingWritten fails when init left the policy or the client config behind.
func nothingWritten(t *testing.T, e *initEnv, cfg string) {
	t.Helper()
	for _, f := range []string{filepath.Join(e.config, "mcpsandbox", "policy.toml"), cfg} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
}

// runCmdTimeout runs cmd, killing it after d.
func runCmdTimeout(t *testing.T, cmd *exec.Cmd, d time.Duration) (string, string, int) {
	t.Helper()
	timer := time.AfterFunc(d, func() {
		if cmd.Process != nil {
			cmd.Process.Kill()
		}
	})
	defer timer.Stop()
	return runCmd(t, cmd)
}

// clientCLI is a real client CLI installed by `npm ci --prefix e2e/node` (pinned in its
// package.json), or a loud skip (a failure under CI=true).
func clientCLI(t *testing.T, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("node", "node_modules", ".bin", name))
	if err == nil {
		_, err = os.Stat(p)
	}
	if err != nil {
		testenv.Skip(t, "the %s CLI is not installed: run `npm ci --prefix e2e/node` (make test does)", name) // fails under CI=true
	}
	return p
}

// The entries init writes connect in the real clients: Claude Code's and Gemini CLI's own
// `mcp list` (each starts the server as it does for a session and reports it) show the server
// Connected, for an allowlist entry, a docker entry (with the offline test image), and an e2b
// entry for Gemini CLI (whose environment would not carry the key unless the entry names it).
// The official MCP Inspector's CLI then makes one tool call through the allowlist and docker
// entries, read from the config file init wrote.
func TestInitEntriesConnectInRealClients(t *testing.T) {
	claude, gemini, inspector := clientCLI(t, "claude"), clientCLI(t, "gemini"), clientCLI(t, "mcp-inspector")
	inspect := func(t *testing.T, e *initEnv, want string, call ...string) {
		t.Helper()
		args := append([]string{"--cli", "--config", filepath.Join(e.home, ".gemini", "settings.json"), "--server", "sandbox", "--method", "tools/call"}, call...)
		cmd := exec.Command(inspector, args...)
		cmd.Env, cmd.Dir = append(e.env, "MCP_INSPECTOR_SECRET_STORE=memory"), e.project
		out, stderr, code := runCmdTimeout(t, cmd, 90*time.Second)
		if code != 0 || !strings.Contains(out, `"exit_code": 0`) || !strings.Contains(out, want) {
			t.Errorf("the Inspector's tool call through the entry init wrote: exit %d\n%s\n%s", code, out, stderr)
		}
	}
	list := func(t *testing.T, e *initEnv, bin string) string {
		t.Helper()
		// Gemini CLI starts MCP servers only in a trusted folder: the user's step, which init names.
		trust, _ := json.Marshal(map[string]string{e.project: "TRUST_FOLDER"})
		os.WriteFile(filepath.Join(e.home, ".gemini", "trustedFolders.json"), trust, 0o600)
		cmd := exec.Command(bin, "mcp", "list")
		cmd.Env, cmd.Dir = e.env, e.project
		out, stderr, _ := runCmdTimeout(t, cmd, 90*time.Second)
		return out + stderr
	}
	check := func(t *testing.T, e *initEnv, clients []string, args ...string) {
		t.Helper()
		for _, c := range clients {
			args = append(args, "--client", c)
		}
		out, stderr, code := e.run(t, "", append(args, "--yes")...)
		if code != 0 {
			t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
		}
		if strings.Contains(strings.Join(clients, " "), "gemini") && !strings.Contains(out, "Gemini CLI: it starts MCP servers (stdio and HTTP, its user-level ones too) only in folders you trust") {
			t.Errorf("init did not name Gemini CLI's own step (folder trust):\n%s", out)
		}
		for _, c := range clients {
			bin := map[string]string{"claude-code": claude, "gemini": gemini}[c]
			if got := list(t, e, bin); !strings.Contains(got, "sandbox") || !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
				t.Errorf("%s mcp list does not show the entry init wrote connected:\n%s", c, got)
			}
		}
	}
	t.Run("allowlist", func(t *testing.T) {
		e := newInitEnv(t)
		args := []string{"--scheme", "allowlist", "--allow", "wc,sort", "--workspace", filepath.Join(e.home, "ws")}
		check(t, e, []string{"claude-code", "gemini"}, args...)
		inspect(t, e, "GNU coreutils", "--tool-name", "run_allowed_command", "--tool-arg", "command=wc", "--tool-arg", `args=["--version"]`)
		// The same init again, after Claude Code saved ~/.claude.json in its own layout (its
		// first start does: one args item a line): the same entry, nothing to change (it said
		// "already has a different server named sandbox").
		b, _ := os.ReadFile(filepath.Join(e.home, ".claude.json"))
		out, stderr, code := e.run(t, "", append(args, "--client", "claude-code", "--yes")...)
		if code != 0 || !strings.Contains(out, "already configured, nothing changed") {
			t.Errorf("init again after Claude Code re-rendered its config: exit %d\n%s\n%s\n%s", code, out, stderr, b)
		}
		if after, _ := os.ReadFile(filepath.Join(e.home, ".claude.json")); string(after) != string(b) {
			t.Errorf("init again changed ~/.claude.json:\n%s\nwas\n%s", after, b)
		}
		// Gemini CLI's own `mcp add` saves its settings in its layout too.
		add := exec.Command(gemini, "mcp", "add", "-s", "user", "other", "/bin/cat")
		add.Env, add.Dir = e.env, e.project
		if out, stderr, code := runCmdTimeout(t, add, 90*time.Second); code != 0 {
			t.Fatalf("gemini mcp add: exit %d\n%s\n%s", code, out, stderr)
		}
		out, stderr, code = e.run(t, "", append(args, "--client", "gemini", "--yes")...)
		if code != 0 || !strings.Contains(out, "already configured, nothing changed") {
			b, _ := os.ReadFile(filepath.Join(e.home, ".gemini", "settings.json"))
			t.Errorf("init again after gemini mcp add re-rendered its settings: exit %d\n%s\n%s\n%s", code, out, stderr, b)
		}
	})
	t.Run("docker", func(t *testing.T) {
		img := dockerTestImage(t)
		e := newInitEnv(t)
		ws := filepath.Join(e.home, "dws")
		os.MkdirAll(ws, 0o755)
		check(t, e, []string{"claude-code", "gemini"}, "--scheme", "docker", "--image", img, "--docker-workspace", ws)
		inspect(t, e, "inspected", "--tool-name", "run_shell_sandbox", "--tool-arg", "script=echo inspected")
	})
	// Written where DOCKER_HOST is set (another spelling of the same engine's socket here), the
	// entry works in clients started without it: it named ${DOCKER_HOST}, which Claude Code hands
	// serve as the literal text ("unable to parse docker host"), while init said "checked" (trial33 F7).
	t.Run("docker-host-set-where-init-runs", func(t *testing.T) {
		img := dockerTestImage(t)
		e := newInitEnv(t)
		sock := "/var/run/docker.sock"
		if h := os.Getenv("DOCKER_HOST"); strings.HasPrefix(h, "unix://") {
			sock = strings.TrimPrefix(h, "unix://")
		}
		host := "unix://" + filepath.Dir(sock) + "//" + filepath.Base(sock)
		base := slices.DeleteFunc(slices.Clone(e.env), func(kv string) bool { return strings.HasPrefix(kv, "DOCKER_HOST=") })
		e.env = append(slices.Clone(base), "DOCKER_HOST="+host)
		out, stderr, code := e.run(t, "", "--scheme", "docker", "--image", img, "--client", "claude-code", "--client", "gemini", "--yes")
		if code != 0 {
			t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
		}
		e.env = base
		for _, bin := range []string{claude, gemini} {
			if got := list(t, e, bin); !strings.Contains(got, "sandbox") || !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
				t.Errorf("%s mcp list, started without DOCKER_HOST, does not show the entry connected:\n%s", filepath.Base(bin), got)
			}
		}
	})
	t.Run("e2b-gemini", func(t *testing.T) {
		e, _ := e2bInitEnv(t, e2bKey)
		check(t, e, []string{"gemini"}, "--scheme", "e2b", "--reuse", "call")
	})
}

// init --print with no --client prints the entry as an "mcpServers" object, and the real MCP
// Inspector, given that output as its --config, starts the server and calls a tool through it.
func TestInitPrintGenericEntryInTheInspector(t *testing.T) {
	inspector := clientCLI(t, "mcp-inspector")
	e := newInitEnv(t)
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(e.home, "ws"), "--print", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, "no client named") || strings.Contains(stderr, "no client configured") {
		t.Errorf("stderr does not say the printed entry is the generic form:\n%s", stderr)
	}
	if !strings.Contains(stderr, "the MCP Inspector: --config FILE --server sandbox") {
		t.Errorf("stderr does not say which clients read the printed entry:\n%s", stderr)
	}
	// stdout as it is, as a user's `init --print --yes > servers.json` writes it: the Inspector
	// refused a "#" comment line there ("Unexpected token '#' … is not valid JSON")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || cfg.MCPServers["sandbox"].Command == "" {
		t.Fatalf("stdout is not an mcpServers object with the entry (%v):\n%s", err, out)
	}
	file := filepath.Join(e.home, "servers.json")
	os.WriteFile(file, []byte(out), 0o600)
	cmd := exec.Command(inspector, "--cli", "--config", file, "--server", "sandbox", "--method", "tools/call",
		"--tool-name", "run_allowed_command", "--tool-arg", "command=wc", "--tool-arg", `args=["--version"]`)
	cmd.Env, cmd.Dir = append(e.env, "MCP_INSPECTOR_SECRET_STORE=memory"), e.project
	got, gotErr, code := runCmdTimeout(t, cmd, 90*time.Second)
	if code != 0 || !strings.Contains(got, `"exit_code": 0`) || !strings.Contains(got, "GNU coreutils") {
		t.Errorf("the Inspector's tool call through the printed entry: exit %d\n%s\n%s", code, got, gotErr)
	}
}

// Claude Code keeps a server switched off per project outside its entry (projects → DIR →
// disabledMcpServers, which /mcp's Disable writes and claude mcp remove keeps): init said "checked"
// of an entry the real Claude Code shows "Disabled for this project" (trial33 F14). init now says
// so, and how to switch it on, and leaves the list as it is.
func TestInitSaysClaudeCodeHasItSwitchedOff(t *testing.T) {
	claude := clientCLI(t, "claude")
	e := newInitEnv(t)
	proj, _ := filepath.EvalSymlinks(e.project)
	cfg := filepath.Join(e.home, ".claude.json")
	os.WriteFile(cfg, []byte(`{"projects": {"`+proj+`": {"disabledMcpServers": ["sandbox"]}}}`), 0o600)
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(e.home, "ws"), "--client", "claude-code", "--yes")
	if code != 0 || !strings.Contains(out, `Claude Code has "sandbox" switched off for this project`) || !strings.Contains(out, "/mcp, select sandbox, Enable") {
		t.Errorf("init does not say Claude Code has the server switched off: exit %d\n%s\n%s", code, out, stderr)
	}
	cmd := exec.Command(claude, "mcp", "list")
	cmd.Env, cmd.Dir = e.env, e.project
	got, gotErr, _ := runCmdTimeout(t, cmd, 90*time.Second)
	if !strings.Contains(got+gotErr, "Disabled") {
		t.Errorf("claude mcp list does not show the entry disabled (the case init warns of):\n%s\n%s", got, gotErr)
	}
}

// init --http URL --token-env V --print with no --client prints the MCP Inspector's form of an
// HTTP entry, and the command line stderr gives (the token in a --header, from the shell's
// variable: the Inspector expands none in its file), run by a shell as the user would, lists the
// running serve --http's tools (trial33 F2: the Cursor form printed, with no "type", made the
// Inspector start a command: "The \"file\" argument must be of type string"). Red with mutant
// init-print-http-cursor-form.
func TestInitPrintHTTPEntryInTheInspector(t *testing.T) {
	inspector := clientCLI(t, "mcp-inspector")
	url, e := runningServeAndInitEnv(t)
	out, stderr, code := e.run(t, "", "--http", url, "--token-env", httpTokVar, "--print", "--yes")
	if code != 0 {
		t.Fatalf("init exit %d:\n%s\n%s", code, out, stderr)
	}
	if strings.Contains(out, httpToken) {
		t.Errorf("the printed entry holds the token itself:\n%s", out)
	}
	var cfg map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || cfg["mcpServers"]["sandbox"] == nil {
		t.Fatalf("stdout is not the mcpServers JSON alone (%v):\n%s", err, out)
	}
	const npx = "npx -y @modelcontextprotocol/inspector@2 "
	i := strings.Index(stderr, npx)
	want := `--header "Authorization: Bearer $` + httpTokVar + `" --method tools/list`
	if i < 0 || !strings.Contains(stderr[i:], want) {
		t.Fatalf("stderr does not give the Inspector's command line with the token's header (%s):\n%s", want, stderr)
	}
	line := stderr[i+len(npx) : i+strings.Index(stderr[i:], want)+len(want)]
	os.WriteFile(filepath.Join(e.project, "servers.json"), []byte(out), 0o600)
	cmd := exec.Command("sh", "-c", inspector+" "+line)
	cmd.Env, cmd.Dir = append(e.env, "MCP_INSPECTOR_SECRET_STORE=memory"), e.project
	got, gotErr, code := runCmdTimeout(t, cmd, 90*time.Second)
	if code != 0 || !strings.Contains(got, "run_allowed_command") {
		t.Errorf("the Inspector, as stderr says (%s): exit %d\n%s\n%s", line, code, got, gotErr)
	}
}

// init --print --verify: stdout is still the entry alone, a file to give as it is; verify's
// report goes to stderr (trial33 F12: it followed the JSON on stdout, and `> servers.json` was
// no longer JSON). Red with mutant init-print-notes-stdout.
func TestInitPrintVerifyStdoutIsTheEntryAlone(t *testing.T) {
	e := newInitEnv(t)
	cmd := exec.Command(binPath, "init", "--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(e.home, "ws"), "--print", "--verify", "--yes")
	cmd.Env, cmd.Dir = e.env, e.project
	out, stderr, code := runCmdTimeout(t, cmd, 5*time.Minute)
	if code != 0 {
		t.Fatalf("init --print --verify exit %d:\n%s\n%s", code, out, stderr)
	}
	var cfg map[string]map[string]json.RawMessage
	if err := json.Unmarshal([]byte(out), &cfg); err != nil || cfg["mcpServers"]["sandbox"] == nil {
		t.Errorf("stdout is not the mcpServers JSON alone (%v):\n%s", err, out)
	}
	if !strings.Contains(stderr, "1. Policy audit") || !strings.Contains(stderr, "verify: PASS") {
		t.Errorf("verify's report is not on stderr:\n%s", stderr)
	}
}
