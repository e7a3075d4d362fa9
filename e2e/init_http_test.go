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

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// init --http: the client entries reach a running `serve --http` with the bearer token read from
// a variable; only the variable's name is written. init checks the entry against the server it
// points to (a wrong token stops it with nothing written), and a client reading the file it
// wrote, substituting the variable as that client does, gets served.
func TestInitHTTPEntries(t *testing.T) {
	url, e := runningServeAndInitEnv(t)
	const tokVar = httpTokVar
	ws := filepath.Join(e.home, "ws")
	args := []string{"--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--http", url, "--token-env", tokVar, "--yes"}
	out, stderr, code := e.run(t, "", append(args, "--client", "cursor", "--client", "codex", "--client", "claude-code", "--client", "vscode:user")...)
	if code != 0 {
		t.Fatalf("init --http: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, want := range []string{"checked: the server at " + url + " answers MCP", "run_allowed_command", "serve it with: MCPSANDBOX_TOKEN=\"$" + tokVar + "\" mcpsandbox serve --policy",
		"your clients read the token from $" + tokVar} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
	files := map[string]string{
		"cursor":      filepath.Join(e.home, ".cursor", "mcp.json"),
		"codex":       filepath.Join(e.home, ".codex", "config.toml"),
		"claude-code": filepath.Join(e.home, ".claude.json"),
		"vscode":      filepath.Join(e.config, "Code", "User", "mcp.json"),
	}
	wants := map[string]string{
		"cursor": `"Authorization": "Bearer ${env:` + tokVar + `}"`, "codex": `bearer_token_env_var = "` + tokVar + `"`,
		"claude-code": `"Authorization": "Bearer ${` + tokVar + `}"`, "vscode": `"Authorization": "Bearer ${env:` + tokVar + `}"`,
	}
	for id, path := range files {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if strings.Contains(string(b), httpToken) {
			t.Errorf("%s's config holds the token itself:\n%s", id, b)
		}
		if !strings.Contains(string(b), url) || !strings.Contains(string(b), wants[id]) || strings.Contains(string(b), `"command"`) {
			t.Errorf("%s's config:\n%s", id, b)
		}
	}

	// Cursor reads its file: ${env:NAME} in headers is the variable's value. Do the same and
	// connect.
	b, _ := os.ReadFile(files["cursor"])
	m := regexp.MustCompile(`"url": "([^"]+)",\s*"headers": \{"Authorization": "([^"]+)"\}`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("no url and header in:\n%s", b)
	}
	auth := regexp.MustCompile(`\$\{env:([A-Za-z_0-9]+)\}`).ReplaceAllStringFunc(string(m[2]), func(ref string) string {
		if strings.Contains(ref, tokVar) {
			return httpToken
		}
		return ""
	})
	hc := &http.Client{Transport: headerRT{auth, http.DefaultTransport}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "as-cursor"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: string(m[1]), HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect as the written entry says: %v", err)
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "run_allowed_command", Arguments: map[string]any{"command": "wc", "args": []string{"-l", "notes.txt"}}})
	if err != nil || r.IsError || !strings.Contains(text(r), "4 notes.txt") {
		t.Fatalf("a call through the written entry: %v %s", err, text(r))
	}
	cs.Close()

	// A wrong token in the variable: init says so and writes nothing.
	e2 := newInitEnv(t)
	e2.env = append(e2.env, tokVar+"=not-the-token-0123456789")
	out, stderr, code = e2.run(t, "", append(args, "--client", "cursor")...)
	if code == 0 || !strings.Contains(stderr, "refused the token in $"+tokVar+" (401)") || !strings.Contains(stderr, "nothing was written") {
		t.Errorf("wrong token: exit %d\n%s\n%s", code, out, stderr)
	}
	for _, p := range []string{filepath.Join(e2.home, ".cursor", "mcp.json"), filepath.Join(e2.config, "mcpsandbox", "policy.toml")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s written although the server refused the token", p)
		}
	}

	// Nothing listening yet (serve --http is started after init): written, with a note.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	down := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	e3 := newInitEnv(t)
	out, stderr, code = e3.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--http", down, "--client", "windsurf", "--yes")
	if code != 0 || !strings.Contains(out, "note: nothing answers at "+down+" yet (") || !strings.Contains(out, "serve it with: mcpsandbox serve --policy") {
		t.Errorf("server not running yet: exit %d\n%s\n%s", code, out, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(e3.home, ".codeium", "windsurf", "mcp_config.json")); err != nil || !strings.Contains(string(b), `"serverUrl": "`+down+`"`) || strings.Contains(string(b), "headers") {
		t.Errorf("windsurf without a token: %v\n%s", err, b)
	}

	// Refusals before anything is written: a client with no HTTP entry, a remote URL without a
	// token variable, a token where its variable's name belongs, --token-env without --http.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--http", url, "--token-env", tokVar, "--client", "claude-desktop"}, "custom connector"},
		{[]string{"--http", "http://sandbox.example:8765/mcp", "--client", "cursor"}, "add --token-env NAME"},
		{[]string{"--http", url, "--token-env", httpToken + "-x", "--client", "cursor"}, "never the token"},
		{[]string{"--token-env", tokVar, "--client", "cursor"}, "--token-env goes with --http"},
	} {
		e4 := newInitEnv(t)
		out, stderr, code := e4.run(t, "", append([]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--yes"}, c.args...)...)
		if code == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want an error saying %q\n%s\n%s", c.args, code, c.want, out, stderr)
		}
		if _, err := os.Stat(filepath.Join(e4.config, "mcpsandbox", "policy.toml")); err == nil {
			t.Errorf("%v: the policy was written", c.args)
		}
	}
}

type headerRT struct {
	auth string
	next http.RoundTripper
}

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", h.auth)
	return h.next.RoundTrip(r)
}

// The wizard asks how clients reach serve; an HTTP answer asks for the token's variable.
func TestInitWizardHTTP(t *testing.T) {
	e := newInitEnv(t)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	w := startWizard(t, e)
	allowlistDefaultSteps(w)
	w.step("`serve --http` you start with this policy", url+enter)
	w.step("bearer token from", enter) // MCPSANDBOX_TOKEN
	w.step("Configure which clients?", "gemini")
	w.step("gemini", " "+enter)
	w.step("Write the policy to", enter)
	w.step("Write them?", enter)
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(e.home, ".gemini", "settings.json"))
	if err != nil || !strings.Contains(string(b), `"httpUrl": "`+url+`"`) || !strings.Contains(string(b), `"Authorization": "Bearer ${MCPSANDBOX_TOKEN}"`) {
		t.Fatalf("gemini settings: %v\n%s", err, b)
	}
}

// The README's example as written: init --http URL --token-env NAME --client cursor --yes, no
// --scheme. A server answers there, with its own policy: init configures only the clients and
// writes no policy (one unrelated to that server). Nothing answering and no --scheme: refused,
// saying to start the server or give --scheme.
func TestInitHTTPClientsOfARunningServer(t *testing.T) {
	url, e := runningServeAndInitEnv(t)
	const tokVar = httpTokVar
	out, stderr, code := e.run(t, "", "--http", url, "--token-env", tokVar, "--client", "cursor", "--yes")
	if code != 0 || !strings.Contains(out, "checked: the server at "+url+" answers MCP") || !strings.Contains(out, "init wrote no policy") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err == nil {
		t.Error("a policy was written, unrelated to the server the entry reaches")
	}
	if b, err := os.ReadFile(filepath.Join(e.home, ".cursor", "mcp.json")); err != nil || !strings.Contains(string(b), url) {
		t.Errorf("cursor: %v\n%s", err, b)
	}
	// --print: the entries on stdout, nothing written, no stdio trial of an entry that has no
	// command (it failed: "the server entry does not start: '': exec: no command", trial32 F22)
	pr := newInitEnv(t)
	pr.env = append(pr.env, tokVar+"="+httpToken)
	for _, args := range [][]string{{"--client", "codex"}, {}} {
		out, stderr, code = pr.run(t, "", append([]string{"--http", url, "--token-env", tokVar, "--print", "--yes"}, args...)...)
		if code != 0 || !strings.Contains(out, url) {
			t.Errorf("--print %v: exit %d\n%s\n%s", args, code, out, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(pr.home, ".codex", "config.toml")); err == nil {
		t.Error("--print wrote Codex's config")
	}
	dead := newInitEnv(t)
	out, stderr, code = dead.run(t, "", "--http", "http://127.0.0.1:9/mcp", "--client", "cursor", "--yes")
	if code == 0 || !strings.Contains(stderr, "start the server first") || !strings.Contains(stderr, "--scheme") {
		t.Errorf("nothing there: exit %d\n%s\n%s", code, out, stderr)
	}
	if _, err := os.Stat(filepath.Join(dead.home, ".cursor", "mcp.json")); err == nil {
		t.Error("wrote an entry for a server that does not answer, with no policy to serve it")
	}
}

// After an HTTP answer the wizard does not offer a client whose config only starts local
// servers: Claude Desktop, preselected when its config is found, ended the wizard with every
// answer lost ("cannot take an HTTP entry", naming --http) (trial32 F23). It says why instead.
func TestInitWizardHTTPLeavesOutStdioOnlyClients(t *testing.T) {
	e := newInitEnv(t)
	desktop := filepath.Join(e.config, "Claude", "claude_desktop_config.json")
	theirs := `{"mcpServers": {}}` + "\n"
	os.MkdirAll(filepath.Dir(desktop), 0o755)
	write(t, desktop, theirs, 0o644)
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	url := "http://" + ln.Addr().String() + "/mcp"
	ln.Close()
	w := startWizard(t, e)
	allowlistDefaultSteps(w)
	w.step("`serve --http` you start with this policy", url+enter)
	w.step("bearer token from", enter)
	w.expect("Not offered for " + url + ": Claude Desktop")
	w.step("Configure which clients?", enter)
	w.step("Write the policy to", enter)
	w.step("Write them?", enter)
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
	}
	if b, _ := os.ReadFile(desktop); string(b) != theirs {
		t.Errorf("Claude Desktop's config changed:\n%s", b)
	}
}

// The wizard's other first choice: the clients of a serve --http already running. It asks no
// scheme, workspace, commands or limits (they would make a policy that server does not run),
// checks the server answers (nothing there: try again, change the URL, or quit, answers kept),
// offers only the clients that can reach a URL, and writes their entries alone: no policy, no
// `serve` to start, no verify of a file (trial32 F24).
func TestInitWizardClientsOfARunningServer(t *testing.T) {
	url, e := runningServeAndInitEnv(t)
	const tokVar = httpTokVar
	desktop := filepath.Join(e.config, "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(desktop), 0o755)
	write(t, desktop, `{"mcpServers": {}}`+"\n", 0o644)
	w := startWizard(t, e)
	w.step("What should init do?", down+enter)
	w.step("URL of the running mcpsandbox serve --http", "http://127.0.0.1:9/mcp"+enter) // nothing there
	w.step("bearer token from", tokVar+enter)
	w.expect("nothing answers there")
	w.step("What now?", down+enter) // change the URL
	w.step("URL of the running mcpsandbox serve --http", url+enter)
	w.step("bearer token from", enter) // the variable given before
	w.expect("Not offered for " + url + ": Claude Desktop")
	w.step("Configure which clients?", "cursor")
	w.step("cursor", " "+enter)
	w.step("Write them?", enter)
	w.expect("init wrote no policy")
	w.expect("your clients read the token from $" + tokVar) // the last line
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
	}
	for _, not := range []string{"Which sandbox scheme?", "Workspace", "Timeout per call", "serve it with", "verify", "--scheme"} {
		if strings.Contains(w.seen.String(), not) {
			t.Errorf("the wizard said %q:\n%s", not, w.seen.String())
		}
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err == nil {
		t.Error("a policy was written, unrelated to the server the entry reaches")
	}
	b, err := os.ReadFile(filepath.Join(e.home, ".cursor", "mcp.json"))
	if err != nil || !strings.Contains(string(b), `"url": "`+url+`"`) || !strings.Contains(string(b), `"Authorization": "Bearer ${env:`+tokVar+`}"`) ||
		strings.Contains(string(b), `"command"`) {
		t.Errorf("cursor: %v\n%s", err, b)
	}
}

// httpTokVar holds the running serve's bearer token in the init environments below.
const httpTokVar = "MCPSB_E2E_TOKEN"

// runningServeAndInitEnv starts serve --http (the fixture's policy) and makes an init
// environment whose httpTokVar holds its token.
func runningServeAndInitEnv(t *testing.T) (string, *initEnv) {
	t.Helper()
	url, _, _ := startHTTPServe(t, newFixture(t, nil))
	e := newInitEnv(t)
	e.env = append(e.env, httpTokVar+"="+httpToken)
	return url, e
}

// The same with no client picked: nothing is written, and the entry to add by hand is shown.
func TestInitWizardClientsOfARunningServerNoClient(t *testing.T) {
	url, e := runningServeAndInitEnv(t)
	w := startWizard(t, e)
	w.step("What should init do?", down+enter)
	w.step("URL of the running mcpsandbox serve --http", url+enter)
	w.step("bearer token from", httpTokVar+enter)
	w.step("Configure which clients?", "\x1b[D"+enter) // none
	w.expect("add this server to your MCP client by hand, as")
	w.expect(url + " (with Authorization: Bearer $" + httpTokVar + ")")
	w.expect("init --http " + url + " --token-env " + httpTokVar + " --client ID (") // to add it later (trial40 F10)
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err == nil {
		t.Error("a policy was written")
	}
}

// Gemini CLI leaves an HTTP entry Disabled in a folder it does not trust, as a stdio one: init gave
// its folder-trust note only for stdio entries (trial33 F1). The real Gemini CLI shows the entry
// Disabled until the folder is trusted as the note says, then Connected.
func TestInitHTTPGeminiTrustNote(t *testing.T) {
	gemini := clientCLI(t, "gemini")
	url, e := runningServeAndInitEnv(t)
	out, stderr, code := e.run(t, "", "--http", url, "--token-env", httpTokVar, "--client", "gemini", "--yes")
	if code != 0 || !strings.Contains(out, "Gemini CLI: it starts MCP servers (stdio and HTTP, its user-level ones too) only in folders you trust: trust "+e.project) {
		t.Fatalf("no folder-trust note: exit %d\n%s\n%s", code, out, stderr)
	}
	list := func() string {
		cmd := exec.Command(gemini, "mcp", "list")
		cmd.Env, cmd.Dir = e.env, e.project
		out, stderr, _ := runCmdTimeout(t, cmd, 90*time.Second)
		return out + stderr
	}
	if got := list(); !strings.Contains(got, "Disabled") {
		t.Errorf("gemini mcp list in an untrusted folder (the case of the note):\n%s", got)
	}
	trust, _ := json.Marshal(map[string]string{e.project: "TRUST_FOLDER"})
	os.WriteFile(filepath.Join(e.home, ".gemini", "trustedFolders.json"), trust, 0o600)
	if got := list(); !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
		t.Errorf("gemini mcp list, the folder trusted as the note says:\n%s", got)
	}
}

// A token variable not set in init's environment (exported in another terminal, say): the
// wizard says so and offers no "Try again", which sees the same environment; "Change the URL
// or the token's variable", preselected, re-asks them, and a variable set here goes on. Both
// HTTP paths: a policy whose clients reach a serve --http, and the clients of one running
// (trial33 F16: "Try again" was preselected, "Change my answers" re-asked the scheme's
// questions alone, and only Quit ended the loop). Red with mutant wizard-token-unset-loop.
func TestInitWizardHTTPTokenVariableUnset(t *testing.T) {
	const unset = "MCPSB_E2E_UNSET_TOKEN"
	cases := map[string]func(w *wizardRun, url string){
		"policy": func(w *wizardRun, url string) {
			allowlistDefaultSteps(w)
			w.step("`serve --http` you start with this policy", url+enter)
			w.step("bearer token from", unset+enter)
			w.step("Configure which clients?", "\x1b[D"+enter) // none
			w.step("Write the policy to", enter)
			w.step("Write them?", enter)
		},
		"running": func(w *wizardRun, url string) {
			w.step("What should init do?", down+enter)
			w.step("URL of the running mcpsandbox serve --http", url+enter)
			w.step("bearer token from", unset+enter)
		},
	}
	for name, steps := range cases {
		t.Run(name, func(t *testing.T) {
			url, e := runningServeAndInitEnv(t)
			w := startWizard(t, e)
			steps(w, url)
			w.expect("$" + unset + " is not set in the environment init runs in")
			w.expect("Quit (nothing is written)")
			menu := w.seen.String()[strings.LastIndex(w.seen.String(), "What now?"):]
			if strings.Contains(menu, "Try again") || !strings.Contains(menu, "> Change the URL or the token's variable") {
				t.Errorf("the menu for an unset token variable (no try again; changing them preselected):\n%s", menu)
			}
			w.con.Send(enter)
			w.step("serve --http", enter) // the URL kept
			w.step("bearer token from", strings.Repeat("\x7f", len(unset)+2)+httpTokVar+enter)
			if name == "policy" {
				w.step("Write them?", enter)
				w.step("on it now (audit", "n"+enter)
				w.expect("verify --policy")
			} else {
				w.step("Configure which clients?", "\x1b[D"+enter)
				w.expect("add this server to your MCP client by hand")
			}
			if err := w.exit(); err != nil {
				t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
			}
		})
	}
}
