package generate

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// wrapFixture is a hermetic machine: a HOME, a config dir, a project, a stand-in for the
// mcpsandbox binary whose `wrap --policy P -- CMD…` checks the policy and runs CMD (until the
// real wrap is linked here), and this test binary as the MCP server every entry starts.
type wrapFixture struct {
	env    Env
	bin    string // the stand-in mcpsandbox
	server string // an MCP server: this test binary with GENERATE_TEST_SERVER set
	dir    string // the policies
	parent []string
}

// testWrap is the scheme's name, as the registry gives it to init.
const testWrap WrapScheme = "wrap"

func newWrapFixture(t *testing.T) *wrapFixture {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in wrap is a shell script")
	}
	root := t.TempDir()
	f := &wrapFixture{env: Env{Home: filepath.Join(root, "home"), ConfigDir: filepath.Join(root, "config"),
		Project: filepath.Join(root, "proj"), GOOS: runtime.GOOS, LookPath: exec.LookPath}}
	for _, d := range []string{f.env.Home, f.env.ConfigDir, f.env.Project} {
		os.MkdirAll(d, 0o755)
	}
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	f.bin = filepath.Join(root, "bin", "mcpsandbox")
	os.MkdirAll(filepath.Dir(f.bin), 0o755)
	// The stand-in does what the contract says wrap's command line is, and refuses a policy
	// that is not a wrap policy or is missing.
	script := "#!/bin/sh\n[ \"$1\" = wrap ] && [ \"$2\" = --policy ] && [ \"$4\" = -- ] || { echo \"usage: wrap --policy P -- CMD\" >&2; exit 2; }\n" +
		"grep -q '^scheme  = \"wrap\"' \"$3\" || { echo \"$3: not a wrap policy\" >&2; exit 2; }\nshift 4\nexec \"$@\"\n"
	if err := os.WriteFile(f.bin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f.server = exe
	f.dir = testWrap.PolicyDir(f.env)
	f.parent = os.Environ()
	return f
}

func (f *wrapFixture) opts() WrapOptions {
	return WrapOptions{Scheme: testWrap, Binary: f.bin, PolicyDir: f.dir, Parent: f.parent, Timeout: 30 * time.Second}
}

// target resolves a client spec and writes its config.
func (f *wrapFixture) target(t *testing.T, spec, text string) Target {
	t.Helper()
	tg, err := ResolveTarget(spec, f.env)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Dir(tg.Path), 0o755)
	if err := os.WriteFile(tg.Path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return tg
}

func (f *wrapFixture) list(t *testing.T, tg Target) []WrapServer {
	t.Helper()
	src, err := os.ReadFile(tg.Path)
	if err != nil {
		t.Fatal(err)
	}
	l, err := testWrap.ListServers(tg, src, f.env.LookPath)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// unwrapAllTo unwraps every recorded entry: the target's file must then be text, byte for byte.
func (f *wrapFixture) unwrapAllTo(t *testing.T, tg Target, text string) {
	t.Helper()
	recs, _ := LoadWrapRecords(f.dir)
	if _, _, err := Unwrap(recs, false); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tg.Path); string(b) != text {
		t.Errorf("after unwrap:\n%s\nwant:\n%s", b, text)
	}
}

// three stdio servers in the shapes people write: args and env, no args, a cwd and extra keys.
func threeJSON(srv string) map[string]string {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	return map[string]string{
		"everything": `{
      "command": ` + q(srv) + `,
      "args": ["--stdio", "x y"],
      "env": {"GENERATE_TEST_SERVER": "1", "API_TOKEN": "${API_TOKEN}"}
    }`,
		"bare":   `{"command": ` + q(srv) + `, "env": {"GENERATE_TEST_SERVER": "1"}}`,
		"tabbed": "{\n\t\"env\":   { \"GENERATE_TEST_SERVER\" : \"1\" } ,\n\t\"command\" : " + q(srv) + ",\n\t\"args\" : [ ],\n\t\"cwd\": \"/tmp\",\n\t\"disabled\": false\n    }",
	}
}

func TestWrapUnwrapByteIdentical(t *testing.T) {
	f := newWrapFixture(t)
	s := threeJSON(f.server)
	servers := `{"everything": ` + s["everything"] + `,
    "bare": ` + s["bare"] + `,
    "tabbed": ` + s["tabbed"] + `}`
	proj, _ := filepath.EvalSymlinks(f.env.Project)
	pq, _ := json.Marshal(proj)
	cases := []struct{ spec, text string }{
		{"claude-desktop", "{\n  \"globalShortcut\": \"\",\n  \"mcpServers\": " + servers + "\n}\n"},
		{"claude-code", "{\n  \"numStartups\": 3,\n  \"mcpServers\": {},\n  \"projects\": {\n    \"/elsewhere\": {\"mcpServers\": {}},\n    " + string(pq) +
			": {\n      \"allowedTools\": [],\n      \"mcpServers\": " + servers + "\n    }\n  }\n}"},
		{"vscode", "// VS Code's mcp.json is JSONC\n{\n  /* the servers */\n  \"servers\": {\n    // first\n    \"everything\": " + s["everything"] +
			", // trailing\n    \"bare\": " + s["bare"] + ",\n    \"tabbed\": " + strings.Replace(s["tabbed"], "\"cwd\"", "// a cwd\n\t\"cwd\"", 1) + ",\n  },\n  \"inputs\": []\n}\n"},
		{"cursor", "\uFEFF{\r\n  \"mcpServers\": {\r\n    \"everything\": " + strings.ReplaceAll(s["everything"], "\n", "\r\n") + ",\r\n    \"bare\": " + s["bare"] + ",\r\n    \"tabbed\": " + s["tabbed"] + "\r\n  }\r\n}"},
		{"codex", "model = \"o3\"  # comment\n\n[mcp_servers.everything]\ncommand = " + tomlString(f.server) + "\nargs = [\n  \"--stdio\",  # a comment\n  \"x y\",\n]\nenv_vars = [\"API_TOKEN\"]\n\n" +
			"[mcp_servers.everything.env]\nGENERATE_TEST_SERVER = \"1\"\n\n[mcp_servers.bare]\ncommand = " + tomlString(f.server) + "  # no args\nenv = { GENERATE_TEST_SERVER = \"1\" }\n" +
			"\n[mcp_servers.\"tabbed\"]\n\targs = []\n\tcommand = '" + f.server + "'\n\tenv = { GENERATE_TEST_SERVER = \"1\" }\n\n[profiles.x]\nmodel = \"gpt\"\n"},
	}
	for _, c := range cases {
		t.Run(c.spec, func(t *testing.T) {
			tg := f.target(t, c.spec, c.text)
			list := f.list(t, tg)
			if len(list) != 3 {
				t.Fatalf("listed %d servers, want 3: %+v", len(list), list)
			}
			for _, s := range list {
				if s.Skip != "" {
					t.Fatalf("%s skipped: %s", s.Name, s.Skip)
				}
			}
			outs, files, err := WrapEntries(context.Background(), f.opts(), list)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || files[0].Backup == "" {
				t.Errorf("wrote %+v, want one write of %s with a backup", files, tg.Path)
			}
			for _, o := range outs {
				if o.Err != nil {
					t.Fatalf("%s: %v", o.Server.Name, o.Err)
				}
				if len(o.Probe.Tools) == 0 {
					t.Errorf("%s: no proof: %+v", o.Server.Name, o.Probe)
				}
			}
			checkWrapped(t, f, tg, list, outs)
			recs, err := LoadWrapRecords(f.dir)
			if err != nil || len(recs) != 3 {
				t.Fatalf("records: %d, %v", len(recs), err)
			}
			uouts, _, err := Unwrap(recs, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, u := range uouts {
				if u.Err != nil {
					t.Errorf("unwrap %s: %v", u.Record.Name, u.Err)
				}
			}
			if got, _ := os.ReadFile(tg.Path); string(got) != c.text {
				t.Errorf("after wrap and unwrap the file differs:\n%s\nwant:\n%s", got, c.text)
			}
			if recs, _ := LoadWrapRecords(f.dir); len(recs) != 0 {
				t.Errorf("records left after unwrap: %v", recs)
			}
			// The policies stay, and a second wrap uses them again instead of adding more.
			outs, _, err = WrapEntries(context.Background(), f.opts(), f.list(t, tg))
			if err != nil || !outs[0].Reused {
				t.Errorf("second wrap: %v, reused %v", err, outs[0].Reused)
			}
			recs, _ = LoadWrapRecords(f.dir)
			if _, _, err := Unwrap(recs, false); err != nil {
				t.Fatal(err)
			}
			if got, _ := os.ReadFile(tg.Path); string(got) != c.text {
				t.Errorf("after the second wrap and unwrap the file differs:\n%s", got)
			}
		})
	}
}

// checkWrapped: each entry now runs bin wrap --policy P -- the original command, keeps its other
// keys, says it is wrapped when listed again, and its policy names the entry's variables.
func checkWrapped(t *testing.T, f *wrapFixture, tg Target, before []WrapServer, outs []WrapOutcome) {
	t.Helper()
	after := f.list(t, tg)
	for i, w := range after {
		b, o := before[i], outs[i]
		if !w.Wrapped || w.Command != f.bin || w.Policy != o.Record.Policy {
			t.Errorf("%s after wrap: %s (wrapped %v, policy %q)", w.Name, w, w.Wrapped, w.Policy)
		}
		if want := testWrap.Args(o.Record.Policy, b.Command, b.Args); !slices.Equal(w.Args, want) {
			t.Errorf("%s args = %q, want %q", w.Name, w.Args, want)
		}
		if !sameMap(w.Env, b.Env) || !slices.Equal(w.EnvNames, b.EnvNames) {
			t.Errorf("%s env = %v, want %v kept", w.Name, w.Env, b.Env)
		}
		pol, err := os.ReadFile(o.Record.Policy)
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Version int
			Scheme  string
			Name    string
			Wrap    struct {
				Command []string
				Env     []string
				Network any
				Read    []string
				Write   []string
			}
		}
		if _, err := toml.Decode(string(pol), &p); err != nil {
			t.Fatalf("%s: %v\n%s", o.Record.Policy, err, pol)
		}
		if p.Scheme != string(testWrap) || p.Name != b.Name || p.Wrap.Network != false || len(p.Wrap.Command) != 0 ||
			!slices.Equal(p.Wrap.Env, b.EnvNames) || len(p.Wrap.Read)+len(p.Wrap.Write) != 0 {
			t.Errorf("%s: policy %+v, want scheme wrap, name %s, env %v, no network, nothing to read or write", o.Record.Policy, p, b.Name, b.EnvNames)
		}
		for k, v := range b.Env {
			if strings.Contains(string(pol), v) && v != "1" {
				t.Errorf("the policy holds the value of %s", k)
			}
		}
		if st, err := os.Stat(o.Record.File); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("record %s: %v %v, want mode 0600", o.Record.File, st, err)
		}
	}
}

func sameMap(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// Entries init --wrap cannot or must not wrap are listed with the reason, and Wrap leaves them.
func TestWrapSkips(t *testing.T) {
	f := newWrapFixture(t)
	text := `{"mcpServers": {
  "remote": {"type": "http", "url": "https://example.com/mcp"},
  "sse": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
  "gone": {"command": "no-such-server-here", "args": []},
  "sandbox": {"command": "/opt/mcpsandbox", "args": ["serve", "--policy", "/p.toml"]},
  "ok": {"command": "` + f.server + `", "env": {"GENERATE_TEST_SERVER": "1"}}
}}
`
	tg := f.target(t, "cursor", text)
	list := f.list(t, tg)
	want := map[string]string{"remote": "HTTP/SSE", "sse": "HTTP/SSE", "gone": "cannot be found", "sandbox": "mcpsandbox's own", "ok": ""}
	for _, s := range list {
		if w := want[s.Name]; w == "" && s.Skip != "" || w != "" && !strings.Contains(s.Skip, w) {
			t.Errorf("%s: skip %q, want %q", s.Name, s.Skip, w)
		}
	}
	outs, _, err := WrapEntries(context.Background(), f.opts(), list)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if (o.Err == nil) != (o.Server.Name == "ok") {
			t.Errorf("%s: %v", o.Server.Name, o.Err)
		}
	}
	// Wrapped now: listed as such, and a second wrap changes nothing.
	list = f.list(t, tg)
	var ok WrapServer
	for _, s := range list {
		if s.Name == "ok" {
			ok = s
		}
	}
	if !ok.Wrapped || !strings.Contains(ok.Skip, "already") {
		t.Errorf("wrapped entry listed as %+v", ok)
	}
	before, _ := os.ReadFile(tg.Path)
	outs, files, err := WrapEntries(context.Background(), f.opts(), []WrapServer{ok})
	if err != nil || len(files) != 0 || outs[0].Err == nil {
		t.Errorf("wrapping a wrapped entry: %v, %v, %v", outs[0].Err, files, err)
	}
	if after, _ := os.ReadFile(tg.Path); string(after) != string(before) {
		t.Error("wrapping a wrapped entry changed the file")
	}
	recs, _ := LoadWrapRecords(f.dir)
	if len(recs) != 1 {
		t.Errorf("records: %v", recs)
	}
}

// An entry whose wrapped form does not answer MCP is put back as it was, with its policy and
// record gone; the others stay wrapped, and unwrapping them gives back the very file.
func TestWrapProofFailureRollsBack(t *testing.T) {
	f := newWrapFixture(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	text := "{\n  \"mcpServers\": {\n    \"good\": {\"command\": \"" + f.server + "\", \"env\": {\"GENERATE_TEST_SERVER\": \"1\"}},\n" +
		"    \"broken\": {\"command\": \"" + sh + "\", \"args\": [\"-c\", \"echo no such module >&2; exit 3\"]}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	outs, files, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 2 {
		t.Errorf("wrote %d times, want 2 (the wrap, then the broken entry put back)", len(files))
	}
	if outs[0].Err != nil {
		t.Errorf("good: %v", outs[0].Err)
	}
	if e := outs[1].Err; e == nil || !strings.Contains(e.Error(), "put back") || !strings.Contains(e.Error(), "no such module") {
		t.Errorf("broken: %v, want the server's words and that it was put back", e)
	}
	// Its record is gone; its policy stays, for the next wrap of it to use (widened).
	if _, err := os.Stat(outs[1].Record.File); err == nil {
		t.Error("the broken entry's record was left")
	}
	if _, err := os.Stat(outs[1].Record.Policy); err != nil || !strings.Contains(outs[1].Err.Error(), outs[1].Record.Policy) {
		t.Errorf("the broken entry's policy is not kept and named: %v", err)
	}
	for _, s := range f.list(t, tg) {
		if s.Wrapped != (s.Name == "good") {
			t.Errorf("%s wrapped = %v", s.Name, s.Wrapped)
		}
	}
	recs, _ := LoadWrapRecords(f.dir)
	if len(recs) != 1 || recs[0].Name != "good" {
		t.Fatalf("records %v, want good's alone", recs)
	}
	if _, _, err := Unwrap(recs, false); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tg.Path); string(got) != text {
		t.Errorf("after unwrap:\n%s\nwant:\n%s", got, text)
	}
}

// An init --wrap whose every entry fails its proof leaves the config and its backups exactly as
// they were: its two writes (the wrap, the put-back) neither add backups nor push out older ones,
// among them the oldest, the file from before init first changed it.
func TestFailedWrapLeavesNoBackups(t *testing.T) {
	f := newWrapFixture(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	text := "{\n  \"mcpServers\": {\n    \"broken\": {\"command\": \"" + sh + "\", \"args\": [\"-c\", \"exit 3\"]}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	// Four earlier inits' backups, oldest first: the hand-written file, then three others.
	base := filepath.Base(tg.Path)
	before := map[string]string{}
	for i, ts := range []string{"20250101-000000", "20250201-000000", "20250301-000000", "20250401-000000"} {
		name := base + ".bak-" + ts
		before[name] = "backup " + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(filepath.Dir(tg.Path), name), []byte(before[name]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outs, files, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	if outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), "put back") {
		t.Fatalf("broken: %v, want it put back", outs[0].Err)
	}
	if len(files) != 0 {
		t.Errorf("reported %d writes for a file that ends as it was, want none: %+v", len(files), files)
	}
	if got, _ := os.ReadFile(tg.Path); string(got) != text {
		t.Errorf("the config is not as it was:\n%s", got)
	}
	after := map[string]string{}
	for _, b := range backupsOf(t, filepath.Dir(tg.Path), base) {
		c, _ := os.ReadFile(filepath.Join(filepath.Dir(tg.Path), b))
		after[b] = string(c)
	}
	if !maps.Equal(before, after) {
		t.Errorf("backups after a failed wrap:\n%v\nwant them as they were:\n%v", after, before)
	}
}

// A file changed elsewhere after wrap: unwrap restores just the entry. An entry the user changed
// after wrap is left alone unless forced.
func TestUnwrapAfterOtherChanges(t *testing.T) {
	f := newWrapFixture(t)
	text := "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"" + f.server + "\", \"env\": {\"GENERATE_TEST_SERVER\": \"1\"}},\n" +
		"    \"b\": {\"command\": \"" + f.server + "\", \"env\": {\"GENERATE_TEST_SERVER\": \"1\"}}\n  }\n}\n"
	tg := f.target(t, "windsurf", text)
	if _, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg)); err != nil {
		t.Fatal(err)
	}
	cur, _ := os.ReadFile(tg.Path)
	// Another program adds a key at the top and a server; the user edits b's wrapped entry.
	edited := strings.Replace(string(cur), "{\n", "{\n  \"theme\": \"dark\",\n", 1)
	edited = strings.Replace(edited, "\"a\": {", "\"new\": {\"command\": \"x\"},\n    \"a\": {", 1)
	edited = strings.Replace(edited, "\"b\": {\"command\"", "\"b\": {\"disabled\": true, \"command\"", 1)
	os.WriteFile(tg.Path, []byte(edited), 0o644)
	recs, _ := LoadWrapRecords(f.dir)
	outs, _, err := Unwrap(recs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if (o.Err == nil) != (o.Record.Name == "a") {
			t.Errorf("%s: %v", o.Record.Name, o.Err)
		}
	}
	got, _ := os.ReadFile(tg.Path)
	want := strings.Replace(text, "{\n", "{\n  \"theme\": \"dark\",\n", 1)
	want = strings.Replace(want, "\"a\": {", "\"new\": {\"command\": \"x\"},\n    \"a\": {", 1)
	if a := strings.Split(string(got), "\n")[4]; a != strings.Split(want, "\n")[4] {
		t.Errorf("a not restored: %q, want %q", a, strings.Split(want, "\n")[4])
	}
	recs, _ = LoadWrapRecords(f.dir)
	if len(recs) != 1 || recs[0].Name != "b" {
		t.Fatalf("records %v, want b's kept", recs)
	}
	if _, _, err := Unwrap(recs, true); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(tg.Path); string(got) != want {
		t.Errorf("after unwrap --force:\n%s\nwant:\n%s", got, want)
	}
}

func TestStripJSONC(t *testing.T) {
	in := `{"a": "x // not a comment, ]", /* c */ "b": [1, 2, /* c */ ], // c
  "c": {"d": "\"", },
}`
	var v map[string]any
	if err := decodeJSONC([]byte(in), &v); err != nil {
		t.Fatal(err)
	}
	if v["a"] != "x // not a comment, ]" || len(v["b"].([]any)) != 2 {
		t.Errorf("decoded %v", v)
	}
}

// A client's server name may hold what a policy's name cannot ("github/mcp", spaces).
func TestPolicyName(t *testing.T) {
	valid := regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`) // policy/validate.go's nameRe
	for _, n := range []string{"everything", "github/mcp server", "@scope/pkg", "..", "", strings.Repeat("x", 80), "日本"} {
		if got := PolicyName(n); !valid.MatchString(got) {
			t.Errorf("PolicyName(%q) = %q, not a valid policy name", n, got)
		}
	}
	if got := PolicyName("my-server_1.2"); got != "my-server_1.2" {
		t.Errorf("a valid name changed: %q", got)
	}
}

// A client that re-renders its whole config when it saves it (Claude Code, ~/.claude.json: its
// own indentation, one array item a line) has not changed the entry: unwrap restores it.
func TestUnwrapAfterTheClientReRendered(t *testing.T) {
	f := newWrapFixture(t)
	entry := `{"command": "` + f.server + `", "args": ["-x"], "env": {"GENERATE_TEST_SERVER": "1"}}`
	tg := f.target(t, "claude-code:user", `{"mcpServers": {"a": `+entry+`}}`)
	if _, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg)); err != nil {
		t.Fatal(err)
	}
	var v any
	b, _ := os.ReadFile(tg.Path)
	json.Unmarshal(b, &v)
	b, _ = json.MarshalIndent(v, "", "  ")
	os.WriteFile(tg.Path, b, 0o644)
	recs, _ := LoadWrapRecords(f.dir)
	outs, _, err := Unwrap(recs, false)
	if err != nil || outs[0].Err != nil {
		t.Fatalf("%v %v", err, outs[0].Err)
	}
	if got, _ := os.ReadFile(tg.Path); !strings.Contains(string(got), `"a": `+entry) {
		t.Errorf("the entry is not restored byte for byte:\n%s", got)
	}
}

// Codex entries in the shapes TOML allows: multi-line and literal strings, comments holding
// brackets, an inline table (left, with why), a quoted name.
func TestWrapCodexShapes(t *testing.T) {
	f := newWrapFixture(t)
	text := "[mcp_servers]\ninline = { command = \"x\" }\n\n[mcp_servers.'quoted.name']\ncommand = '''" + f.server + "'''\n" +
		"args = [ # a [bracket] in a comment\n  \"\"\"multi\nline\"\"\", 'lit]', ]\nenv = { GENERATE_TEST_SERVER = \"1\" }\n" +
		"[mcp_servers.'quoted.name'.extra]\ncommand = \"not this one\"\n"
	tg := f.target(t, "codex", text)
	list := f.list(t, tg)
	if len(list) != 2 || !strings.Contains(list[0].Skip, "inline") || list[1].Skip != "" {
		t.Fatalf("listed %+v", list)
	}
	if want := []string{"multi\nline", "lit]"}; !slices.Equal(list[1].Args, want) {
		t.Errorf("args %q, want %q", list[1].Args, want)
	}
	outs, _, err := WrapEntries(context.Background(), f.opts(), list[1:])
	if err != nil || outs[0].Err != nil {
		t.Fatalf("%v %v", err, outs[0].Err)
	}
	after := f.list(t, tg)
	if !after[1].Wrapped || !slices.Equal(after[1].Args[4:], []string{f.server, "multi\nline", "lit]"}) {
		t.Errorf("after wrap: %+v", after[1])
	}
	var pol map[string]any
	if b, _ := os.ReadFile(outs[0].Record.Policy); toml.Unmarshal(b, &pol) != nil {
		t.Errorf("the policy is not TOML (an argument's newline in a comment?):\n%s", b)
	}
	if b, _ := os.ReadFile(tg.Path); !strings.Contains(string(b), "command = \"not this one\"") {
		t.Errorf("the sub-table's key was rewritten:\n%s", b)
	}
	f.unwrapAllTo(t, tg, text)
}

// Variables the entry sets that wrap refuses to pass (it sets PATH itself; NODE_OPTIONS injects
// code) are left out of the policy, which says so and loads.
func TestWrapPolicyLeavesOutRefusedVariables(t *testing.T) {
	if !slices.Contains(policy.Schemes, string(testWrap)) {
		testenv.Skip(t, "this build has no wrap scheme to check the policy against")
	}
	f := newWrapFixture(t)
	tg, _ := ResolveTarget("cursor", f.env)
	s := WrapServer{Target: tg, Name: "srv", Command: "/bin/true", EnvNames: []string{"API_KEY", "NODE_OPTIONS", "PATH"}}
	path := filepath.Join(f.dir, "srv.toml")
	b, err := testWrap.RenderPolicy(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := policy.Parse(path, b); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	var p struct{ Wrap struct{ Env []string } }
	toml.Unmarshal(b, &p)
	if !slices.Equal(p.Wrap.Env, []string{"API_KEY"}) || !strings.Contains(string(b), "# not passed: NODE_OPTIONS") || !strings.Contains(string(b), "# not passed: PATH") {
		t.Errorf("env %v, policy:\n%s", p.Wrap.Env, b)
	}
}

// The proof starts an entry with what its client would give it: the client's own rule (Codex:
// a short list; Gemini CLI: its environment less secrets), then the entry's env with references
// expanded, and Codex's env_vars.
func TestWrapProofEnv(t *testing.T) {
	parent := []string{"PATH=/bin", "HOME=/h", "API_TOKEN=tok", "OTHER=o", "MY_SECRET=s"}
	get := func(env []string, k string) string { v, _ := lookupEnv(env, k); return v }
	f := newWrapFixture(t)
	codex, _ := ResolveTarget("codex", f.env)
	s := WrapServer{Target: codex, Env: map[string]string{"LIT": "x"}, EnvNames: []string{"API_TOKEN", "LIT"}}
	env := s.ProofEnv(parent)
	if get(env, "API_TOKEN") != "tok" || get(env, "LIT") != "x" || get(env, "OTHER") != "" || get(env, "PATH") != "/bin" {
		t.Errorf("codex: %v", env)
	}
	gem, _ := ResolveTarget("gemini", f.env)
	s = WrapServer{Target: gem, Env: map[string]string{"KEY": "${MY_SECRET}", "D": "${NOPE:-dflt}"}, EnvNames: []string{"D", "KEY"}}
	env = s.ProofEnv(parent)
	if get(env, "KEY") != "s" || get(env, "D") != "dflt" || get(env, "MY_SECRET") != "" || get(env, "API_TOKEN") != "" || get(env, "OTHER") != "o" {
		t.Errorf("gemini: %v", env)
	}
}

// A failed wrap of a server npx starts names the registry it needs once: when wrap's own message
// (in what the server said) already gives the hint, init does not add it again; when it does not,
// init does. A new user's trial saw the same hint twice in one error.
func TestWrapFirstStartHintOnce(t *testing.T) {
	f := newWrapFixture(t)
	bin := filepath.Join(filepath.Dir(f.bin), "runners")
	os.MkdirAll(bin, 0o755)
	const hint = `needs network = ["registry.npmjs.org"]`
	for name, says := range map[string]string{
		"npx":       "npm error code ENOTCACHED\nmcpsandbox: the wrapped server ended (exit status 1); if it could not fetch its package: a server npx has not fetched before " + hint + " in P for its first start",
		"quiet/npx": "npm error code ENOTCACHED",
	} {
		p := filepath.Join(bin, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho '"+says+"' >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	text := "{\n  \"mcpServers\": {\n    \"said\": {\"command\": \"" + filepath.Join(bin, "npx") + "\", \"args\": [\"-y\", \"x\"]},\n" +
		"    \"silent\": {\"command\": \"" + filepath.Join(bin, "quiet/npx") + "\", \"args\": [\"-y\", \"x\"]}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Err == nil {
			t.Fatalf("%s: wrapped, want it put back", o.Server.Name)
		}
		if n := strings.Count(o.Err.Error(), hint); n != 1 {
			t.Errorf("%s: the registry hint %d times, want once:\n%v", o.Server.Name, n, o.Err)
		}
	}
}

// A failed wrap whose policy already lets the server reach its registry gets no registry hint:
// the registry was not what it lacked (a new user's trial, network widened as init said, saw the
// hint again for a server that could not read its directory). With network = false it does.
func TestWrapFirstStartHintNotWhenReached(t *testing.T) {
	f := newWrapFixture(t)
	bin := filepath.Join(filepath.Dir(f.bin), "runners")
	os.MkdirAll(bin, 0o755)
	npx := filepath.Join(bin, "npx")
	if err := os.WriteFile(npx, []byte("#!/bin/sh\necho 'Error: None of the specified directories are accessible' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	const hint = `needs network = ["registry.npmjs.org"]`
	text := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"" + npx + "\", \"args\": [\"-y\", \"x\"]}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), hint) {
		t.Fatalf("network = false: %+v, want the registry hint", outs)
	}
	pol := outs[0].Record.Policy
	src, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	widened := regexp.MustCompile(`(?m)^network *= *false.*$`).ReplaceAllString(string(src), `network = ["registry.npmjs.org"]`)
	if widened == string(src) {
		t.Fatalf("no network = false line in the policy:\n%s", src)
	}
	os.WriteFile(pol, []byte(widened), 0o600)
	outs, _, err = WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 1 || outs[0].Err == nil || strings.Contains(outs[0].Err.Error(), hint) {
		t.Errorf("the registry listed: %v, want no registry hint", outs[0].Err)
	}
	if !strings.Contains(outs[0].Err.Error(), "None of the specified directories") {
		t.Errorf("the server's words are missing: %v", outs[0].Err)
	}
}

// A failed wrap of a server whose arguments name a directory (server-filesystem's) that its
// policy neither reads nor writes says so, with the read key to add; once read lists it, not.
// A new user's trial saw only the server's "Cannot access directory".
func TestWrapNamesHiddenPathArguments(t *testing.T) {
	f := newWrapFixture(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	notes := t.TempDir()
	text := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"" + sh + "\", \"args\": [\"-c\", \"echo Cannot access directory >&2; exit 1\", \"" + notes + "\", \"/no/such/dir\"]}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("read = [%q]", notes)
	if len(outs) != 1 || outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), want) || !strings.Contains(outs[0].Err.Error(), "arguments or environment name "+notes+", which") {
		t.Fatalf("%+v, want the hint %s (and no missing path)", outs, want)
	}
	pol := outs[0].Record.Policy
	src, _ := os.ReadFile(pol)
	widened := regexp.MustCompile(`(?m)^read *= *\[\].*$`).ReplaceAllString(string(src), fmt.Sprintf("read = [%q]", notes))
	if widened == string(src) {
		t.Fatalf("no read = [] line in the policy:\n%s", src)
	}
	os.WriteFile(pol, []byte(widened), 0o600)
	outs, _, _ = WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if len(outs) != 1 || outs[0].Err == nil || strings.Contains(outs[0].Err.Error(), "hides from it") {
		t.Errorf("read lists it: %v, want no hint", outs[0].Err)
	}
}

// A wrap policy names the audit log where this init's environment puts it, as init's other
// policies do (trial32 F10).
func TestWrapPolicyNamesTheAuditLogThisInitSees(t *testing.T) {
	f := newWrapFixture(t)
	t.Setenv("XDG_STATE_HOME", "/srv/my-state")
	tg, _ := ResolveTarget("cursor", f.env)
	b, err := testWrap.RenderPolicy(WrapServer{Target: tg, Name: "srv", Command: "/bin/true"}, filepath.Join(f.dir, "srv.toml"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `path = "/srv/my-state/mcpsandbox/audit.jsonl"`; !strings.Contains(string(b), want) {
		t.Errorf("want %s in:\n%s", want, b)
	}
}

// TestWrapCodexKeyInAString: a line reading `command = …` or `args = …` (or a table header)
// inside a multi-line string or array before the entry's real keys is part of that value: the
// real command and args are wrapped, the string stays as it was, and unwrap puts the file back
// byte for byte. It was the string that got rewritten, the real command left, and the entry
// reported wrapped while its server ran unsandboxed (atk33 F4).
func TestWrapCodexKeyInAString(t *testing.T) {
	for _, tc := range []struct{ name, before string }{
		{"basic", "startup_note = \"\"\"\ncommand = \"npx\"\n\"\"\"\n"},
		{"literal", "startup_note = '''\ncommand = 'npx'\nargs = []\n'''\n"},
		{"args", "note = \"\"\"\nargs = [\"--other\"]\n\"\"\"\n"},
		{"array", "notes = [\n  \"\"\"\ncommand = \"npx\"\n\"\"\",\n  '''\n[other]\n''',\n]\n"},
		{"header", "note = \"\"\"\n[mcp_servers.docs.env]\ncommand = \"npx\"\n\"\"\"\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newWrapFixture(t)
			text := "model = \"m\"\n\n[mcp_servers.docs]\n" + tc.before + "command = " + strconv.Quote(f.server) +
				"\nargs = [\"--stdio\"]\nenv = { GENERATE_TEST_SERVER = \"1\" }\n"
			tg := f.target(t, "codex", text)
			list := f.list(t, tg)
			if len(list) != 1 || list[0].Skip != "" {
				t.Fatalf("listed %+v", list)
			}
			outs, _, err := WrapEntries(context.Background(), f.opts(), list)
			if err != nil || outs[0].Err != nil {
				t.Fatalf("%v %v", err, outs[0].Err)
			}
			b, _ := os.ReadFile(tg.Path)
			var doc, orig struct {
				MCPServers map[string]map[string]any `toml:"mcp_servers"`
			}
			if _, err := toml.Decode(string(b), &doc); err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			toml.Decode(text, &orig)
			got, was := doc.MCPServers["docs"], orig.MCPServers["docs"]
			if got["command"] != f.bin || fmt.Sprint(got["args"]) != fmt.Sprint([]any{"wrap", "--policy", outs[0].Record.Policy, "--", f.server, "--stdio"}) {
				t.Errorf("wrapped entry: command %v args %v\n%s", got["command"], got["args"], b)
			}
			for k := range was {
				if k != "command" && k != "args" && fmt.Sprint(got[k]) != fmt.Sprint(was[k]) {
					t.Errorf("%s changed: %v, was %v", k, got[k], was[k])
				}
			}
			f.unwrapAllTo(t, tg, text)
		})
	}
}

// TestWrapTOMLEditsChecked: a line-based wrap or unwrap whose result is not the intended entry
// with every other key as it was (the string rewritten instead of the real command, another
// table's key lost) is refused, saying to edit by hand. Red under mutants
// init-wrap-toml-unchecked and init-unwrap-toml-unchecked.
func TestWrapTOMLEditsChecked(t *testing.T) {
	codex := client(t, "codex")
	old := "[mcp_servers.docs]\nnote = \"\"\"\ncommand = \"npx\"\n\"\"\"\ncommand = \"/srv\"\nargs = [\"--stdio\"]\n"
	args := []string{"wrap", "--policy", "/p.toml", "--", "/srv", "--stdio"}
	bad := "[mcp_servers.docs]\nnote = \"\"\"\ncommand = \"/bin/m\"\n\"\"\"\ncommand = \"/srv\"\nargs = " + tomlList(args) + "\n"
	good := "[mcp_servers.docs]\nnote = \"\"\"\ncommand = \"npx\"\n\"\"\"\ncommand = \"/bin/m\"\nargs = " + tomlList(args) + "\n"
	if err := codex.checkWrapTOML([]byte(old), []byte(bad), "docs", "/bin/m", args); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("the string wrapped, not the command: %v", err)
	}
	if err := codex.checkWrapTOML([]byte(old), []byte(good), "docs", "/bin/m", args); err != nil {
		t.Errorf("the command wrapped: %v", err)
	}
	cur := "[other]\na = 1\n" + good
	if err := codex.checkRestoredTOML([]byte(cur), []byte(old), "docs", old); err == nil || !strings.Contains(err.Error(), "by hand") {
		t.Errorf("restored over another table's key: %v", err)
	}
	if err := codex.checkRestoredTOML([]byte(cur), []byte("[other]\na = 1\n"+old), "docs", old); err != nil {
		t.Errorf("restored: %v", err)
	}
}

// TestWrapProofStartsOnlyTheWrappedEntry: the proof reads the entry back from the file and
// starts it; an entry there that is not the wrapped one (the server's own command still) is
// refused, not started: its answering MCP would say nothing of the sandbox (atk33 F4). Red
// under mutant init-wrap-proof-unwrapped.
func TestWrapProofStartsOnlyTheWrappedEntry(t *testing.T) {
	f := newWrapFixture(t)
	tg := f.target(t, "codex", "[mcp_servers.docs]\ncommand = "+strconv.Quote(f.server)+"\nargs = [\"--stdio\"]\nenv = { GENERATE_TEST_SERVER = \"1\" }\n")
	list := f.list(t, tg)
	if len(list) != 1 || list[0].Skip != "" {
		t.Fatalf("listed %+v", list)
	}
	pol := filepath.Join(f.dir, "codex-docs.toml")
	_, err := proveEntry(context.Background(), f.opts(), WrapOutcome{Server: list[0], Record: WrapRecord{Policy: pol}})
	if err == nil || !strings.Contains(err.Error(), "not the wrapped entry") {
		t.Errorf("the unwrapped entry was proved: %v", err)
	}
}

// A home among the server's path arguments (server-filesystem given ~) is not hinted into read:
// wrap then refused that read (the audit log lies in it) with a fix that did not help (trial33
// F5). The hint says to point the server at project directories; another path keeps its read
// hint. Red with mutant init-wrap-path-hint-home.
func TestWrapHintGivesNoHomeToRead(t *testing.T) {
	f := newWrapFixture(t)
	t.Setenv("HOME", f.env.Home)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	notes := t.TempDir()
	text := "{\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"" + sh + "\", \"args\": [\"-c\", \"echo Cannot access directory >&2; exit 1\", \"" + f.env.Home + "\", \"" + notes + "\"]}\n  }\n}\n"
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, f.target(t, "claude-desktop", text)))
	if err != nil || len(outs) != 1 || outs[0].Err == nil {
		t.Fatalf("%+v %v", outs, err)
	}
	msg := outs[0].Err.Error()
	if strings.Contains(msg, fmt.Sprintf("%q", f.env.Home)) || !strings.Contains(msg, "a server is not given a home whole") ||
		!strings.Contains(msg, fmt.Sprintf("read = [%q]", notes)) {
		t.Errorf("the hint for a home and a project directory:\n%s", msg)
	}
}

// TestWrapJSONKeyWrittenTwice: an entry, its command or args written twice in a JSON config
// (clients read the last; init's byte edit would take the first) is not wrapped: init says which
// key, and the file is left as it was. Red under mutant init-duplicate-keys.
func TestWrapJSONKeyWrittenTwice(t *testing.T) {
	for name, body := range map[string]string{
		"command": `{"mcpServers": {"docs": {"command": "/bin/false", "command": SRV, "args": ["--stdio"], "env": {"GENERATE_TEST_SERVER": "1"}}}}`,
		"entry":   `{"mcpServers": {"docs": {"command": "/bin/false"}, "docs": {"command": SRV, "args": ["--stdio"], "env": {"GENERATE_TEST_SERVER": "1"}}}}`,
		"args":    `{"mcpServers": {"docs": {"command": SRV, "args": ["--x"], "args": ["--stdio"], "env": {"GENERATE_TEST_SERVER": "1"}}}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f := newWrapFixture(t)
			text := strings.ReplaceAll(body, "SRV", strconv.Quote(f.server))
			tg := f.target(t, "cursor", text)
			list := f.list(t, tg)
			if len(list) != 1 {
				t.Fatalf("listed %d entries: %+v", len(list), list)
			}
			outs, _, err := WrapEntries(context.Background(), f.opts(), list)
			if err != nil || len(outs) != 1 || outs[0].Err == nil || !strings.Contains(outs[0].Err.Error(), "twice") {
				t.Errorf("wrapped: %v %+v", err, outs)
			}
			if b, _ := os.ReadFile(tg.Path); string(b) != text {
				t.Errorf("the file changed:\n%s", b)
			}
		})
	}
}

// A wrapped server that starts may still fail at its first call on a path its entry names that
// the policy hides: an env value too (server-memory's MEMORY_FILE_PATH, a file it will make).
// init says so after the wrap (trial34 F2: "checked", then ENOENT at the first call). Red under
// mutant init-wrap-path-hint-env.
func TestWrapNotesHiddenPathsOfAStartedServer(t *testing.T) {
	f := newWrapFixture(t)
	data := t.TempDir()
	mem := filepath.Join(data, "memory.json")
	text := "{\n  \"mcpServers\": {\n    \"memory\": {\"command\": " + strconv.Quote(f.server) + ", \"env\": {\"GENERATE_TEST_SERVER\": \"1\", \"MEMORY_FILE_PATH\": " + strconv.Quote(mem) + "}}\n  }\n}\n"
	tg := f.target(t, "claude-desktop", text)
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg))
	if err != nil || len(outs) != 1 || outs[0].Err != nil {
		t.Fatalf("%v %+v", err, outs)
	}
	if h := outs[0].Hint; !strings.Contains(h, mem+" (in MEMORY_FILE_PATH)") || !strings.Contains(h, fmt.Sprintf("read = [%q]", data)) {
		t.Errorf("the note: %q, want %s named with its variable and its directory to add", h, mem)
	}
}

// The wrap policy's [limits] comments say what README says they bound: memory each process's
// address space (not the tree's), pids RLIMIT_NPROC, which counts the server's uid (trial35 F9:
// they said "the whole process tree").
func TestWrapPolicyLimitsSayWhatTheyBound(t *testing.T) {
	f := newWrapFixture(t)
	tg, _ := ResolveTarget("cursor", f.env)
	b, err := testWrap.RenderPolicy(WrapServer{Target: tg, Name: "srv", Command: "/bin/true"}, filepath.Join(f.dir, "srv.toml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	for _, want := range []string{"address space of each process, not the tree's total", "RLIMIT_NPROC: processes and threads of the server's uid", "cpus is not enforced"} {
		if !strings.Contains(text, want) {
			t.Errorf("the [limits] comments lack %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "whole process tree") || strings.Contains(text, "of the whole tree") {
		t.Errorf("the [limits] comments say the limits bound the whole tree:\n%s", text)
	}
}

// An env value's hint opens what the server uses: a directory named by the variable itself
// (HOME_DIR=~/docs), a file's directory unless that is a home; a file directly in the home
// (MEMORY_FILE_PATH=~/memory.json) is told to move to a directory of its own. The hint never
// says read = [HOME] (trial36 F1: it did, and wrap then refused that read). Red under mutant
// init-wrap-path-hint-env-home.
func TestWrapEnvHintGivesNoHome(t *testing.T) {
	f := newWrapFixture(t)
	t.Setenv("HOME", f.env.Home)
	docs := filepath.Join(f.env.Home, "docs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	mem := filepath.Join(f.env.Home, "memory.json")
	text := "{\n  \"mcpServers\": {\n    \"mem\": {\"command\": " + strconv.Quote(f.server) + ", \"env\": {\"GENERATE_TEST_SERVER\": \"1\", \"HOME_DIR\": " + strconv.Quote(docs) + ", \"MEMORY_FILE_PATH\": " + strconv.Quote(mem) + "}}\n  }\n}\n"
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, f.target(t, "claude-desktop", text)))
	if err != nil || len(outs) != 1 || outs[0].Err != nil {
		t.Fatalf("%v %+v", err, outs)
	}
	h := outs[0].Hint
	if strings.Contains(h, fmt.Sprintf("%q]", f.env.Home)) || strings.Contains(h, fmt.Sprintf("%q,", f.env.Home)) {
		t.Errorf("the note hints the home into read: %q", h)
	}
	if !strings.Contains(h, docs+" (in HOME_DIR)") || !strings.Contains(h, fmt.Sprintf("read = [%q]", docs)) {
		t.Errorf("the note does not hint the directory HOME_DIR names: %q", h)
	}
	if !strings.Contains(h, mem+" (in MEMORY_FILE_PATH)") || !strings.Contains(h, "point the variable at a file in a directory of its own (e.g. ~/mcp-data/mem/memory.json)") {
		t.Errorf("the note does not move the file out of the home: %q", h)
	}
}

// A wrap that refused its policy before the server ran (the audit log in wrap.read) gets no
// registry hint when it is put back: the registry was not the reason, and the hint read as it
// (trial36 F1). Red under mutant init-wrap-hint-refused.
func TestWrapFirstStartHintNotWhenWrapRefused(t *testing.T) {
	f := newWrapFixture(t)
	bin := filepath.Join(filepath.Dir(f.bin), "runners")
	os.MkdirAll(bin, 0o755)
	npx := filepath.Join(bin, "npx")
	says := "mcpsandbox: refusing to wrap: the audit log /h/audit.jsonl lies inside wrap.read[0] = /h, which sandboxed code reads"
	if err := os.WriteFile(npx, []byte("#!/bin/sh\necho '"+says+"' >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	text := "{\n  \"mcpServers\": {\n    \"ev\": {\"command\": \"" + npx + "\", \"args\": [\"-y\", \"x\"]}\n  }\n}\n"
	outs, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, f.target(t, "claude-desktop", text)))
	if err != nil || len(outs) != 1 || outs[0].Err == nil {
		t.Fatalf("%v %+v", err, outs)
	}
	if msg := outs[0].Err.Error(); !strings.Contains(msg, "refusing to wrap") || strings.Contains(msg, "registry.npmjs.org") {
		t.Errorf("the put-back message blames the registry for wrap's refusal:\n%s", msg)
	}
}

// An entry whose only change since init --wrap is wrap's own flag before "--" (init's advice:
// add --explain-denials) is restored without --force: nothing of the server's changed. Another
// change is refused, and named (trial36 F4: refused, and not said what). Red under mutant
// init-unwrap-wrap-flags.
func TestUnwrapAfterExplainDenials(t *testing.T) {
	for _, c := range []struct{ client, text string }{
		{"windsurf", "{\n  \"mcpServers\": {\n    \"a\": {\"command\": SRV, \"env\": {\"GENERATE_TEST_SERVER\": \"1\"}},\n    \"b\": {\"command\": SRV, \"env\": {\"GENERATE_TEST_SERVER\": \"1\"}}\n  }\n}\n"},
		{"codex", "[mcp_servers.a]\ncommand = SRV\nenv = { GENERATE_TEST_SERVER = \"1\" }\n\n[mcp_servers.b]\ncommand = SRV\nenv = { GENERATE_TEST_SERVER = \"1\" }\n"},
	} {
		t.Run(c.client, func(t *testing.T) {
			f := newWrapFixture(t)
			text := strings.ReplaceAll(c.text, "SRV", strconv.Quote(f.server))
			tg := f.target(t, c.client, text)
			if _, _, err := WrapEntries(context.Background(), f.opts(), f.list(t, tg)); err != nil {
				t.Fatal(err)
			}
			cur, _ := os.ReadFile(tg.Path)
			// a: the flag init advises; b: the flag, and its server's arguments changed
			edited := strings.Replace(string(cur), `"wrap", "--policy"`, `"wrap", "--explain-denials", "--policy"`, 2)
			edited = strings.Replace(edited, `"--", `+strconv.Quote(f.server)+`]`, `"--", `+strconv.Quote(f.server)+`, "--debug"]`, 2)
			edited = strings.Replace(edited, `"--", `+strconv.Quote(f.server)+`, "--debug"]`, `"--", `+strconv.Quote(f.server)+`]`, 1)
			if strings.Count(edited, "--explain-denials") != 2 || strings.Count(edited, "--debug") != 1 {
				t.Fatalf("the edit did not take:\n%s", edited)
			}
			os.WriteFile(tg.Path, []byte(edited), 0o644)
			recs, _ := LoadWrapRecords(f.dir)
			outs, _, err := Unwrap(recs, false)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range outs {
				switch o.Record.Name {
				case "a":
					if o.Err != nil {
						t.Errorf("a (only --explain-denials added) not restored: %v", o.Err)
					}
				case "b":
					if o.Err == nil || !strings.Contains(o.Err.Error(), `args now ["wrap","--explain-denials","--policy"`) || !strings.Contains(o.Err.Error(), `"--debug"]`) {
						t.Errorf("b's change not refused or not named: %v", o.Err)
					}
				}
			}
			if got, _ := os.ReadFile(tg.Path); !strings.Contains(string(got), strings.Split(text, "b")[0]) {
				t.Errorf("a not restored byte for byte:\n%s", got)
			}
		})
	}
}
