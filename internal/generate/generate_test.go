package generate

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"
	dksec "github.com/mcpsandbox/mcpsandbox/internal/schemes/docker/section"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func client(t *testing.T, id string) Client {
	t.Helper()
	for _, c := range Clients() {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no client %s", id)
	return Client{}
}

// Golden files per client format: each case merges the entry into testdata/merge/NAME.in and must
// equal NAME.golden; the result must parse, hold the entry, and keep every other server.
func TestMergeGolden(t *testing.T) {
	e := NewServerEntry("/usr/local/bin/mcpsandbox", "/home/me/.config/mcpsandbox/policy.toml")
	cases := []struct {
		name, client string
		replace      bool
		keep         []string // other servers or keys that must survive
	}{
		{"claude-code-new", "claude-code", false, nil},
		{"cursor-others", "cursor", false, []string{"github", "someUnknownSetting", "GITHUB_TOKEN"}},
		{"vscode-jsonc", "vscode", false, []string{"// VS Code MCP servers", "/* servers we already use */", "// trailing comment", "fetch", "promptString"}},
		{"claude-desktop-empty-servers", "claude-desktop", false, []string{"globalShortcut"}},
		{"claude-code-user-nokey", "claude-code", false, []string{"numStartups", "allowedTools"}},
		{"cursor-replace", "cursor", true, []string{`"other"`}},
		{"gemini-crlf", "gemini", false, []string{"theme", `"a"`}},
		{"windsurf-minimal", "windsurf", false, nil},
		{"codex-new", "codex", false, nil},
		{"codex-others", "codex", false, []string{"[mcp_servers.docs]", "# keep me", "[profiles.fast]", "# Codex config"}},
		{"codex-replace", "codex", true, []string{"[mcp_servers.other]", `model = "o4-mini"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := client(t, c.client)
			_, out := goldenMerge(t, cl, c.name, c.name, e, c.replace)
			for _, k := range c.keep {
				if !strings.Contains(string(out), k) {
					t.Errorf("lost %q", k)
				}
			}
			if strings.Contains(string(out), "/old/") {
				t.Errorf("old entry kept: %s", out)
			}
			checkEntry(t, cl, out, e)
		})
	}
}

// goldenMerge merges e into testdata/merge/IN.in and checks the result against NAME.golden
// (-update rewrites it); it returns the input and the result.
func goldenMerge(t *testing.T, cl Client, name, in string, e ServerEntry, replace bool) ([]byte, []byte) {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", "merge", in+".in"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := Merge(cl, src, "sandbox", e, replace)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "merge", name+".golden")
	if *update {
		os.WriteFile(golden, out, 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/generate -update to create it)", err)
	}
	if string(out) != string(want) {
		t.Errorf("merge differs from %s:\n%s", golden, Diff(golden, string(want), string(out)))
	}
	return src, out
}

// checkEntry parses the merged config as its client would and finds the entry.
func checkEntry(t *testing.T, c Client, out []byte, e ServerEntry) {
	t.Helper()
	var got struct {
		Command string
		Args    []string
		Type    string
	}
	if c.Format == "toml" {
		var doc map[string]map[string]struct {
			Command string
			Args    []string
		}
		if _, err := toml.Decode(string(out), &doc); err != nil {
			t.Fatalf("merged TOML does not parse: %v", err)
		}
		s := doc[c.Key]["sandbox"]
		got.Command, got.Args = s.Command, s.Args
	} else {
		root, err := parseJSONC(out)
		if err != nil {
			t.Fatalf("merged JSON does not parse: %v", err)
		}
		m := root.member(c.Key).val.member("sandbox")
		if m == nil {
			t.Fatal("entry missing")
		}
		var v map[string]any
		if err := jsonUnmarshalStrict(out[m.val.start:m.val.end], &v); err != nil {
			t.Fatal(err)
		}
		got.Command, _ = v["command"].(string)
		for _, a := range v["args"].([]any) {
			got.Args = append(got.Args, a.(string))
		}
		got.Type, _ = v["type"].(string)
		if want, _ := c.Entry["type"].(string); got.Type != want {
			t.Errorf("type = %q, want %q", got.Type, want)
		}
	}
	if got.Command != e.Command || !reflect.DeepEqual(got.Args, e.Args) {
		t.Errorf("entry = %+v, want %+v", got, e)
	}
}

func TestMergeRefusals(t *testing.T) {
	e := NewServerEntry("/bin/m", "/p.toml")
	cur := client(t, "cursor")
	if _, err := Merge(cur, []byte(`{"mcpServers": {"sandbox": {"command": "x"}}}`), "sandbox", e, false); !errors.Is(err, ErrExists) {
		t.Errorf("same name without replace: %v", err)
	}
	if _, err := Merge(client(t, "codex"), []byte("[mcp_servers.sandbox]\ncommand = \"x\"\n"), "sandbox", e, false); !errors.Is(err, ErrExists) {
		t.Errorf("codex same name without replace: %v", err)
	}
	for in, line := range map[string]int{
		"{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"\n  }\n": 5,
		"{\n  \"mcpServers\": [1, 2]\n}\n":                              2,
		"{\n  \"a\": 1,\n  \"b\" 2\n}\n":                                3,
		"[1, 2]":                                                        1,
		"{\n  /* open comment\n}":                                       2,
		// two servers objects, or one server twice: clients read the last, init would write the first
		"{\n  \"mcpServers\": {},\n  \"mcpServers\": {}\n}\n":                         3,
		"{\n  \"mcpServers\": {\n    \"sandbox\": {},\n    \"sandbox\": {}\n  }\n}\n": 4,
	} {
		_, err := Merge(cur, []byte(in), "sandbox", e, false)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Line != line {
			t.Errorf("%q: err = %v, want a syntax error on line %d", in, err, line)
		}
	}
	_, err := Merge(client(t, "codex"), []byte("model = \"x\"\n[mcp_servers\n"), "sandbox", e, false)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line < 2 {
		t.Errorf("codex: %v", err)
	}
}

func TestRenderPolicyRoundTrip(t *testing.T) {
	ws := t.TempDir()
	cs, err := PinDefaults()
	if err != nil {
		t.Fatal(err)
	}
	p := policy.Default(alsec.Name)
	alsec.Of(p).Workspace, alsec.Of(p).Commands = ws, cs
	alsec.Of(p).Env["ODD"] = "quote \" backslash \\ tab \t"
	alsec.Of(p).User = "1000:1000"
	alsec.Of(p).ReadPaths = []string{"/opt/data"}
	alsec.Of(p).Commands[0].AllowOutsidePaths = true
	alsec.Of(p).Protect = []string{"scripts/hooks", "!CLAUDE.md"}
	alsec.Of(p).HardLinks = alsec.HardLinksReadOnly
	p.Audit.Path = "/var/log/mcp \"audit\".jsonl"
	d := policy.Default(dksec.Name)
	dksec.Of(d).Workspace, dksec.Of(d).WorkspaceWritable, dksec.Of(d).Pool, dksec.Of(d).Runtime = "/w", true, 2, "runsc"
	e := policy.Default(e2bsec.Name)
	e2bsec.Of(e).Reuse, e2bsec.Of(e).AllowInternet, e2bsec.Of(e).APIURL = "call", true, "https://e2b.example"
	// The network key in each form it takes: a host list (written one host a line), every host,
	// a docker network.
	hosts, err := policy.NetworkHosts("pypi.org", "files.pythonhosted.org:443", "*.example.com", "203.0.113.7", "[2001:db8::1]:8443")
	if err != nil {
		t.Fatal(err)
	}
	ph := clonePolicy(t, p)
	alsec.Of(ph).SetNet(hosts)
	pall := clonePolicy(t, p)
	alsec.Of(pall).SetNet(policy.Network{Mode: policy.NetAll})
	dh := policy.Default(dksec.Name)
	dksec.Of(dh).SetNet(hosts)
	dn := policy.Default(dksec.Name)
	dksec.Of(dn).SetNet(policy.Network{Mode: policy.NetNamed, Name: "bridge"})
	for _, want := range []*policy.Policy{p, d, e, ph, pall, dh, dn} {
		path := filepath.Join(t.TempDir(), "policy.toml")
		b, err := RenderPolicy(want, path)
		if err != nil {
			t.Fatalf("%s: %v", want.Scheme, err)
		}
		got, err := policy.Parse(path, b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", want.Scheme, err, b)
		}
		// Exactly the same policy: the active scheme's section and the shared ones.
		if got.Hash() != want.Hash() || !reflect.DeepEqual(got.Limits, want.Limits) || !reflect.DeepEqual(got.Audit, want.Audit) {
			t.Errorf("%s: loads back differently", want.Scheme)
		}
		switch want.Scheme {
		case alsec.Name:
			if !reflect.DeepEqual(alsec.Of(got), alsec.Of(want)) {
				t.Errorf("allowlist: %+v\nwant %+v", alsec.Of(got), alsec.Of(want))
			}
		case dksec.Name:
			if *dksec.Of(got) != *dksec.Of(want) {
				t.Errorf("docker: %+v", dksec.Of(got))
			}
		case e2bsec.Name:
			if *e2bsec.Of(got) != *e2bsec.Of(want) {
				t.Errorf("e2b: %+v", e2bsec.Of(got))
			}
		}
		if want.Scheme != e2bsec.Name {
			n := alsec.Of(want).Net()
			if want.Scheme == dksec.Name {
				n = dksec.Of(want).Net()
			}
			wantLine := "network = [\n  \"pypi.org\",\n  \"files.pythonhosted.org:443\",\n  \"*.example.com\",\n  \"203.0.113.7\",\n  \"[2001:db8::1]:8443\",\n]"
			if n.Mode != policy.NetHosts {
				wantLine = "= " + n.String() + "  #"
			}
			if !strings.Contains(string(b), wantLine) {
				t.Errorf("%s: network %s is not written as %q:\n%s", want.Scheme, n, wantLine, b)
			}
		}
		if !strings.Contains(string(b), "# ") || strings.Count(string(b), "#") < 10 {
			t.Errorf("%s: the policy is not commented:\n%s", want.Scheme, b)
		}
	}
}

func TestWriteFileSafely(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "cfg.json")
	os.WriteFile(p, []byte("old"), 0o600)
	r, err := WriteFileSafely(p, []byte("new"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("content %q", b)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: the old file's permissions were not kept", st.Mode().Perm())
	}
	if b, _ := os.ReadFile(r.Backup); string(b) != "old" {
		t.Errorf("backup %q holds %q", r.Backup, b)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 { // the file and its backup, no temporary left
		t.Errorf("left behind: %v", ents)
	}
	// A read-only file is refused and left as it was, even for root.
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("keep"), 0o444)
	if _, err := WriteFileSafely(ro, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("read-only file: %v", err)
	}
	if b, _ := os.ReadFile(ro); string(b) != "keep" {
		t.Error("read-only file changed")
	}
	// New file in a new directory.
	n := filepath.Join(dir, "a", "b", "new.json")
	if r, err := WriteFileSafely(n, []byte("{}"), 0o644); err != nil || r.Backup != "" {
		t.Fatalf("new file: %+v %v", r, err)
	}
}

func TestTargetsAndDetect(t *testing.T) {
	home := t.TempDir()
	e := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: "/proj", GOOS: "linux",
		LookPath: func(n string) (string, error) {
			if n == "codex" {
				return "/usr/bin/codex", nil
			}
			return "", errors.New("no")
		}}
	for spec, want := range map[string]string{
		"claude-code":         filepath.Join(home, ".claude.json"),
		"claude-code:project": "/proj/.mcp.json",
		"claude-code:user":    filepath.Join(home, ".claude.json"),
		"claude-desktop":      filepath.Join(home, ".config/Claude/claude_desktop_config.json"),
		"cursor":              filepath.Join(home, ".cursor/mcp.json"),
		"cursor:project":      "/proj/.cursor/mcp.json",
		"vscode":              "/proj/.vscode/mcp.json",
		"vscode:user":         filepath.Join(home, ".config/Code/User/mcp.json"),
		"windsurf":            filepath.Join(home, ".codeium/windsurf/mcp_config.json"),
		"codex":               filepath.Join(home, ".codex/config.toml"),
		"gemini":              filepath.Join(home, ".gemini/settings.json"),
		"gemini:project":      "/proj/.gemini/settings.json",
		// as a user may type them: one client, one scope
		"Claude-Code:Project": "/proj/.mcp.json",
		" VSCode ":            "/proj/.vscode/mcp.json",
		"GEMINI":              filepath.Join(home, ".gemini/settings.json"),
	} {
		tg, err := ResolveTarget(spec, e)
		if err != nil || tg.Path != want {
			t.Errorf("%s: %v %v, want %s", spec, tg.Path, err, want)
		}
	}
	if _, err := ResolveTarget("emacs", e); err == nil || !strings.Contains(err.Error(), "claude-code") {
		t.Errorf("unknown client: %v", err)
	}
	if _, err := ResolveTarget("windsurf:project", e); err == nil {
		t.Error("unknown scope accepted")
	}
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o755)
	if got := Detect(e); !reflect.DeepEqual(got, []string{"cursor", "codex"}) {
		t.Errorf("Detect = %v", got)
	}
	// VS Code whose only mcp.json is the user's: its user scope is preselected, not a new
	// .vscode/mcp.json in the project; once the project has one, the default scope again
	proj := t.TempDir()
	e.Project = proj
	user := filepath.Join(home, ".config/Code/User/mcp.json")
	os.MkdirAll(filepath.Dir(user), 0o755)
	os.WriteFile(user, []byte("{}"), 0o644)
	if got := Detect(e); !reflect.DeepEqual(got, []string{"cursor", "vscode:user", "codex"}) {
		t.Errorf("Detect with only VS Code's user mcp.json = %v, want vscode:user", got)
	}
	os.MkdirAll(filepath.Join(proj, ".vscode"), 0o755)
	os.WriteFile(filepath.Join(proj, ".vscode/mcp.json"), []byte("{}"), 0o644)
	if got := Detect(e); !reflect.DeepEqual(got, []string{"cursor", "vscode", "codex"}) {
		t.Errorf("Detect with the project's .vscode/mcp.json = %v, want vscode", got)
	}
}

func TestCheckWorkspace(t *testing.T) {
	for ws, ok := range map[string]bool{"/": false, "/home/me": false, "/home": false, "rel/dir": false, "": false,
		"/home/me/ai-workspace": true, "/srv/ai": true, "/home/me/.ssh": false, "/home/me/.config/x": false, "/etc": false,
		"/usr/local/share/ws": false} {
		if err := CheckWorkspace(ws, "/home/me"); (err == nil) != ok {
			t.Errorf("CheckWorkspace(%q) = %v", ws, err)
		}
	}
}

func TestDiff(t *testing.T) {
	d := Diff("f", "a\nb\nc\n", "a\nB\nc\nd\n")
	for _, want := range []string{"--- f", "-b", "+B", "+d", " a"} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
}

// clonePolicy is a deep copy (through the policy's own TOML form).
func clonePolicy(t *testing.T, p *policy.Policy) *policy.Policy {
	t.Helper()
	b, err := RenderPolicy(p, "clone.toml")
	if err != nil {
		t.Fatal(err)
	}
	c, err := policy.Parse("clone.toml", b)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The limits the wizard asks as text are judged at their question by the policy's own rule,
// in words (no "time:" prefix, the fix said once); empty keeps the default (trial30 F1).
func TestLimitAnswersJudgedAtTheQuestion(t *testing.T) {
	a := &Answers{Scheme: "allowlist"}
	valid := map[string]func(*Answers, string, Env) error{}
	for _, q := range LimitQuestions {
		if q.Validate != nil {
			valid[q.Flag] = q.Validate
		}
	}
	for _, c := range []struct{ flag, v, want string }{
		{"timeout", "forever", `timeout "forever" is not a duration: write it like "30s" or "2m"`},
		{"timeout", "0s", "timeout 0s: must be positive"},
		{"timeout", "1h", "is over the hard maximum of 10m0s"},
		{"max-output", "lots", `output cap "lots" is not a size: write it like "256MiB", "64KiB" or a number of bytes`},
		{"max-output", "100", "output cap 100: 100 is outside 1KiB..64MiB"},
		{"memory", "0", "memory 0: 0 is below 16MiB"},
	} {
		v := valid[c.flag]
		if v == nil {
			t.Fatalf("the %s question has no validator", c.flag)
		}
		err := v(a, c.v, Env{})
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "time:") || strings.Count(err.Error(), "e.g.")+strings.Count(err.Error(), "like") > 1 {
			t.Errorf("--%s %q: %v, want %q", c.flag, c.v, err, c.want)
		}
		// the flags' path says the same
		p := policy.Default("allowlist")
		if err2 := SetLimit(&p.Limits, c.flag, c.v); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("--%s %q: the flag's path says %v, the question %v", c.flag, c.v, err2, err)
		}
	}
	for _, c := range []struct{ flag, v string }{{"timeout", "2m"}, {"timeout", ""}, {"max-output", "1MiB"}, {"memory", " 512MiB "}, {"memory", ""}} {
		if err := valid[c.flag](a, c.v, Env{}); err != nil {
			t.Errorf("--%s %q refused: %v", c.flag, c.v, err)
		}
	}
}

// A Codex config whose servers are one inline table (mcp_servers = { … }) gets no [mcp_servers.NAME]
// table appended: TOML lets nothing extend an inline table, and Codex refuses the whole file
// (init's own reader did not). Refused, saying how to write it; the form with tables, and an
// inline table only in a multi-line string after a header, still merge (trial32 F12). The file's
// statements are read as TOML, not its lines: a line starting "[" in an earlier multi-line
// string or array is no header, and a key spelled with an escape is the same key (atk33 F2).
func TestMergeRefusesToExtendAnInlineServersTable(t *testing.T) {
	e := NewServerEntry("/bin/m", "/p.toml")
	codex := client(t, "codex")
	inline := "mcp_servers = { docs = { command = \"npx\", args = [\"-y\", \"docs-mcp\"] } }\n"
	for _, src := range []string{
		"model = \"o3\"\nmcp_servers = { fs = { command = \"npx\", args = [\"x\"] } }\n",
		"\"mcp_servers\" = {}\n[other]\na = 1\n",
		"model = \"gpt-5\"\ndeveloper_instructions = \"\"\"\nAlways cite sources like\n[1] the source\n\"\"\"\n" + inline,
		"notes = '''\n[IMPORTANT] read this\n'''\n" + inline,
		"matrix = [\n  [1, 2],\n]\n" + inline,
		"\"mcp\\u005Fservers\" = { docs = { command = \"npx\", args = [\"-y\", \"docs-mcp\"] } }\n",
		"\ufeff" + inline,
	} {
		for _, replace := range []bool{false, true} {
			if out, err := Merge(codex, []byte(src), "sandbox", e, replace); err == nil || !strings.Contains(err.Error(), "inside the braces") {
				t.Errorf("%q: %v\n%s", src, err, out)
			}
		}
	}
	for _, src := range []string{
		"[mcp_servers.fs]\ncommand = \"npx\"\n",
		"[notes]\ntext = \"\"\"\nmcp_servers = { }\n\"\"\"\n",
		"text = \"\"\"\nmcp_servers = { }\n\"\"\"\n",
		"mcp_servers.fs = { command = \"npx\" }\n",
	} {
		if _, err := Merge(codex, []byte(src), "sandbox", e, false); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

// TestTOMLEditRefusesExtendingAnInlineTable: whatever the edit, a result that extends an inline
// table is refused though init's own reader takes it (TOML 1.0 and Codex refuse the file whole),
// as is a result that is not the old document with the intended entry (atk33 F2). Red under
// mutant init-toml-strict.
func TestTOMLEditRefusesExtendingAnInlineTable(t *testing.T) {
	codex := client(t, "codex")
	block := "[mcp_servers.sandbox]\ncommand = \"/bin/m\"\n"
	for _, src := range []string{
		"mcp_servers = { docs = { command = \"npx\" } }\n",
		"[x]\nservers = { a = 1 }\n[x.servers.b]\nc = 1\n",
	} {
		var old map[string]any
		if _, err := decodeTOML([]byte(src), &old); err != nil {
			t.Fatal(err)
		}
		if err := codex.checkTOMLEdit(old, []byte(src+block), "sandbox", block, "added"); err == nil || !strings.Contains(err.Error(), "by hand") {
			t.Errorf("%q: %v", src, err)
		}
	}
	src := "[[a]]\nx = { b = 1 }\n[[a]]\n[a.x.y]\nc = 1\n" // the second element's x is a table of its own
	var old map[string]any
	if _, err := decodeTOML([]byte(src), &old); err != nil {
		t.Fatal(err)
	}
	if err := codex.checkTOMLEdit(old, []byte(src+block), "sandbox", block, "added"); err != nil {
		t.Errorf("%q: %v", src, err)
	}
}

// TestMergeTOMLChecksWhatItAdds: an entry appended to a file whose mcp_servers is no table (an
// array of tables, a string) would land in the array's last element or not parse: init refuses,
// saying to edit by hand. Red under mutant init-toml-add-unchecked.
func TestMergeTOMLChecksWhatItAdds(t *testing.T) {
	e := NewServerEntry("/bin/m", "/p.toml")
	for _, src := range []string{
		"[[mcp_servers]]\ncommand = \"npx\"\n",
		"mcp_servers = \"none\"\n",
	} {
		if out, err := Merge(client(t, "codex"), []byte(src), "sandbox", e, false); err == nil || !strings.Contains(err.Error(), "by hand") {
			t.Errorf("%q: %v\n%s", src, err, out)
		}
	}
}
