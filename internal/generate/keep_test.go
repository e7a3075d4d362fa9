package generate

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestForceKeepsTheUsersKeys: --force over a different entry of the same name (another policy,
// stdio to HTTP) replaces how the client reaches the server and keeps the user's settings of it
// in the client, in JSON (as written, multi-line values too) and in Codex's TOML (values and
// sub-tables). Red when they are dropped (mutant init-force-drops-keys).
func TestForceKeepsTheUsersKeys(t *testing.T) {
	dir := t.TempDir()
	gemini := `{
  "mcpServers": {
    "sandbox": {
      "command": "/opt/old/mcpsandbox",
      "args": ["serve", "--policy", "/home/me/old.toml"],
      "env": {"DOCKER_HOST": "unix:///run/old.sock"},
      "timeout": 60000,
      "includeTools": [
        "run_allowed_command",
        "read_file"
      ]
    },
    "fs": { "command": "node", "args": ["fs.js"] }
  }
}
`
	gp := filepath.Join(dir, "settings.json")
	os.WriteFile(gp, []byte(gemini), 0o600)
	gt := Target{Client: client(t, "gemini"), Scope: "user", Path: gp}
	c, err := ClientChange(gt, "sandbox", NewHTTPEntry("http://127.0.0.1:8765/mcp", "MCPSANDBOX_TOKEN"), true)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if err := decodeJSONC(c.New, &doc); err != nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
	got := doc["mcpServers"]["sandbox"]
	want := map[string]any{
		"httpUrl": "http://127.0.0.1:8765/mcp", "headers": got["headers"], "timeout": float64(60000),
		"includeTools": []any{"run_allowed_command", "read_file"},
	}
	if got["headers"] == nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("the HTTP entry replacing a stdio one: got %v, want the URL, its header, and the user's timeout and includeTools (no command, args or env)\n%s", got, c.New)
	}
	if !slices.Equal(c.Kept, []string{"includeTools", "timeout"}) || !slices.Equal(c.Dropped, []string{"args", "command", "env"}) {
		t.Errorf("the keys reported kept: %q, want includeTools and timeout; dropped: %q, want args, command and env", c.Kept, c.Dropped)
	}
	if !reflect.DeepEqual(doc["mcpServers"]["fs"], map[string]any{"command": "node", "args": []any{"fs.js"}}) {
		t.Fatalf("another server changed:\n%s", c.New)
	}

	codex := `[mcp_servers.fs]
command = "node"
args = ["fs.js"]

[mcp_servers.sandbox]
command = "/opt/old/mcpsandbox"
args = ["serve", "--policy", "/home/me/old.toml"]
env_vars = ["DOCKER_HOST"]
startup_timeout_sec = 20
enabled = false

[mcp_servers.sandbox.env]
FOO = "1"

[mcp_servers.sandbox.tools.run_allowed_command]
approval = "never"

[profiles.x]
model = "m"
`
	cp := filepath.Join(dir, "config.toml")
	os.WriteFile(cp, []byte(codex), 0o600)
	ct := Target{Client: client(t, "codex"), Scope: "user", Path: cp}
	e := NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/new.toml")
	c, err = ClientChange(ct, "sandbox", e, true)
	if err != nil {
		t.Fatal(err)
	}
	var td map[string]any
	if _, err := decodeTOML(c.New, &td); err != nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
	servers := td["mcp_servers"].(map[string]any)
	sb := servers["sandbox"].(map[string]any)
	wantTOML := map[string]any{
		"command": "/home/me/bin/mcpsandbox", "args": []any{"serve", "--policy", "/home/me/new.toml"},
		"startup_timeout_sec": int64(20), "enabled": false,
		"tools": map[string]any{"run_allowed_command": map[string]any{"approval": "never"}},
	}
	if !reflect.DeepEqual(sb, wantTOML) {
		t.Fatalf("the Codex entry under --force: got %v, want the new command and args with the user's startup_timeout_sec, enabled and tools (not env or env_vars)\n%s", sb, c.New)
	}
	if !slices.Equal(c.Kept, []string{"enabled", "startup_timeout_sec", "tools"}) || !slices.Equal(c.Dropped, []string{"env", "env_vars"}) {
		t.Errorf("the Codex keys reported kept: %q, dropped: %q", c.Kept, c.Dropped)
	}
	if servers["fs"] == nil || td["profiles"] == nil || !bytes.Contains(c.New, []byte("[profiles.x]\nmodel = \"m\"\n")) {
		t.Fatalf("the rest of the file changed:\n%s", c.New)
	}
	// Run again with the same entry: the same server with the user's keys, nothing to write.
	os.WriteFile(cp, c.New, 0o600)
	if again, err := ClientChange(ct, "sandbox", e, false); err != nil || !again.Unchanged() {
		t.Fatalf("init again over the entry it wrote with the kept keys: %v\n%s", err, again.New)
	}
	if strings.Count(string(c.New), "[mcp_servers.sandbox]") != 1 {
		t.Fatalf("the table is written once:\n%s", c.New)
	}
}

// TestForceDropsTheOldServersAuth: keys that say how the client authenticates to the replaced
// server, or where it runs it, go with it like its URL and headers (attack round atk22b). Kept,
// Codex refused the whole config.toml (a stdio entry with oauth_resource), Gemini CLI threw on
// authProviderType without a googleapis.com URL, and Claude Code ran the old server's
// headersHelper and sent its headers to init's server. Another scope's entry differing by one
// of them is another server. Red under mutant init-force-keeps-auth-keys.
func TestForceDropsTheOldServersAuth(t *testing.T) {
	dir := t.TempDir()
	codex := `[mcp_servers.sandbox]
url = "https://mcp.example.com/mcp"
oauth_resource = "https://mcp.example.com"
scopes = ["read"]
environment_id = "remote"
startup_timeout_sec = 20

[mcp_servers.sandbox.oauth]
client_id = "abc"
`
	cp := filepath.Join(dir, "config.toml")
	os.WriteFile(cp, []byte(codex), 0o600)
	ct := Target{Client: client(t, "codex"), Scope: "user", Path: cp}
	c, err := ClientChange(ct, "sandbox", NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/p.toml"), true)
	if err != nil {
		t.Fatal(err)
	}
	var td map[string]map[string]map[string]any
	if _, err := decodeTOML(c.New, &td); err != nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
	sb := td["mcp_servers"]["sandbox"]
	for _, k := range []string{"oauth_resource", "scopes", "environment_id", "oauth", "url"} {
		if _, ok := sb[k]; ok {
			t.Errorf("Codex's stdio entry kept %s of the HTTP server it replaced (Codex refuses a stdio entry with oauth or oauth_resource; environment_id runs it elsewhere)\n%s", k, c.New)
		}
	}
	if sb["startup_timeout_sec"] != int64(20) || !slices.Contains(c.Kept, "startup_timeout_sec") {
		t.Errorf("the user's startup_timeout_sec: got %v, kept %q\n%s", sb["startup_timeout_sec"], c.Kept, c.New)
	}
	if !slices.Equal(c.Dropped, []string{"environment_id", "oauth", "oauth_resource", "scopes", "url"}) {
		t.Errorf("Codex keys reported dropped: %q", c.Dropped)
	}

	gemini := `{"mcpServers": {"sandbox": {
  "httpUrl": "https://x.googleapis.com/mcp",
  "authProviderType": "google_credentials",
  "oauth": {"scopes": ["https://www.googleapis.com/auth/cloud-platform"]},
  "targetAudience": "aud",
  "trust": true
}}}`
	gp := filepath.Join(dir, "settings.json")
	os.WriteFile(gp, []byte(gemini), 0o600)
	gt := Target{Client: client(t, "gemini"), Scope: "user", Path: gp}
	c, err = ClientChange(gt, "sandbox", NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/p.toml"), true)
	if err != nil {
		t.Fatal(err)
	}
	var gd map[string]map[string]map[string]any
	if err := decodeJSONC(c.New, &gd); err != nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
	want := map[string]any{"command": "/home/me/bin/mcpsandbox", "args": []any{"serve", "--policy", "/home/me/p.toml"}, "trust": true}
	if got := gd["mcpServers"]["sandbox"]; !reflect.DeepEqual(got, want) {
		t.Errorf("Gemini CLI's entry: got %v, want the new command and args with the user's trust only (authProviderType without a googleapis.com URL throws)\n%s", got, c.New)
	}

	claude := `{"mcpServers": {"sandbox": {"type": "http", "url": "https://old.example/mcp", "headersHelper": "/home/me/bin/old-token.sh", "oauth": {"clientId": "x"}, "disabled": false}}}`
	lp := filepath.Join(dir, "claude.json")
	os.WriteFile(lp, []byte(claude), 0o600)
	lc := client(t, "claude-code")
	lt := Target{Client: lc, Scope: "user", Path: lp}
	c, err = ClientChange(lt, "sandbox", NewHTTPEntry("http://127.0.0.1:8765/mcp", "MCPSANDBOX_TOKEN"), true)
	if err != nil {
		t.Fatal(err)
	}
	var ld map[string]map[string]map[string]any
	if err := decodeJSONC(c.New, &ld); err != nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
	got := ld["mcpServers"]["sandbox"]
	if got["headersHelper"] != nil || got["oauth"] != nil || got["disabled"] != false {
		t.Errorf("Claude Code's HTTP entry to init's server: got %v, want no headersHelper or oauth of the old server (its headers would go to the new one), the user's disabled kept\n%s", got, c.New)
	}
	// Another scope's entry with init's URL but the old server's headersHelper is no same server.
	ours := []byte(`{"type": "http", "url": "http://127.0.0.1:8765/mcp"}`)
	theirs := []byte(`{"type": "http", "url": "http://127.0.0.1:8765/mcp", "headersHelper": "/home/me/bin/other.sh"}`)
	if lc.sameServer(theirs, ours) {
		t.Errorf("an entry whose headersHelper makes its own headers is taken for init's server: no shadow warning")
	}
}

// TestForceTOMLArrayOfTablesOnce: an array of tables under the replaced Codex table
// ([[mcp_servers.sandbox.x]]) is carried once: the line-based replacement left its elements in
// place after keptTOML had written them again, so each was there twice (attack round atk22b).
// Red under mutant init-force-toml-arrays-twice.
func TestForceTOMLArrayOfTablesOnce(t *testing.T) {
	src := `[mcp_servers.sandbox]
command = "old"
startup_timeout_sec = 5

[[mcp_servers.sandbox.hooks]]
run = "a"

[[mcp_servers.sandbox.hooks]]
run = "b"

[profiles.x]
model = "m"
`
	out, err := Merge(client(t, "codex"), []byte(src), "sandbox", NewServerEntry("/bin/mcpsandbox", "/p.toml"), true)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]map[string]map[string]any
	if _, err := decodeTOML(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []map[string]any{{"run": "a"}, {"run": "b"}}
	if got := doc["mcp_servers"]["sandbox"]["hooks"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("the array of tables under the replaced entry: got %v, want its two elements once\n%s", got, out)
	}
	if doc["profiles"]["x"]["model"] != "m" || doc["mcp_servers"]["sandbox"]["startup_timeout_sec"] != int64(5) {
		t.Fatalf("the rest changed:\n%s", out)
	}
	if bytes.Contains(out, []byte("\n\n\n")) {
		t.Errorf("two blank lines before the array of tables:\n%s", out)
	}
}

// TestForceTOMLLineThatLooksLikeAHeader: a multi-line string holding a line that starts with
// "[" (the replaced entry's description, another table's prompt naming the entry's table) cut
// the line-based replacement in the wrong place (attack round atk22b): such a line is now part of
// its string, and the entry is replaced with the rest as it was (atk33 F2). Where the line-based
// replacement still cannot give the intended document (the entry partly written as dotted keys
// outside its table), init refuses and says to edit it by hand. A file with date-times and nan
// still replaces. Red under mutant init-toml-replace-unchecked.
func TestForceTOMLLineThatLooksLikeAHeader(t *testing.T) {
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	for _, tc := range []struct{ src, kept string }{
		{"[mcp_servers.sandbox]\ncommand = \"old\"\ndescription = \"\"\"\n[beta] my server\nmore\n\"\"\"\n\n[profiles.x]\nmodel = \"m\"\n", "[profiles.x]\nmodel = \"m\"\n"},
		{"[profiles.x]\nprompt = '''\nnotes\n[mcp_servers.sandbox]\nis mine\n'''\n\n[mcp_servers.sandbox]\ncommand = \"old\"\n", "prompt = '''\nnotes\n[mcp_servers.sandbox]\nis mine\n'''\n"},
	} {
		out, err := Merge(client(t, "codex"), []byte(tc.src), "sandbox", e, true)
		var doc map[string]any
		if err != nil || !bytes.Contains(out, []byte(tc.kept)) || bytes.Contains(out, []byte("\"old\"")) {
			t.Errorf("--force over a table beside a multi-line string with a [ line: %v\n%s", err, out)
		} else if _, err := decodeTOML(out, &doc); err != nil {
			t.Errorf("the result does not decode: %v\n%s", err, out)
		}
	}
	for _, src := range []string{
		"mcp_servers.sandbox.description = \"d\"\n[mcp_servers.sandbox]\ncommand = \"old\"\n",
		"[mcp_servers]\nsandbox.description = \"d\"\n[mcp_servers.sandbox]\ncommand = \"old\"\n",
	} {
		out, err := Merge(client(t, "codex"), []byte(src), "sandbox", e, true)
		if err == nil {
			var doc map[string]any
			_, perr := decodeTOML(out, &doc)
			t.Errorf("--force over an entry partly in dotted keys: no error (decodes: %v)\n%s", perr, out)
		} else if !strings.Contains(err.Error(), "by hand") {
			t.Errorf("the error does not say to edit by hand: %v", err)
		}
	}
	src := "[profiles.x]\nwhen = 1979-05-27T07:32:00-08:00\nlimit = nan\n\n[mcp_servers.sandbox]\ncommand = \"old\"\nseen = 2026-01-02T03:04:05+01:00\nweight = nan\n"
	if out, err := Merge(client(t, "codex"), []byte(src), "sandbox", e, true); err != nil || !bytes.Contains(out, []byte("when = 1979-05-27T07:32:00-08:00\nlimit = nan\n")) {
		t.Errorf("--force beside date-times and nan: %v\n%s", err, out)
	}
}

// TestForceSaysAKeptOffSwitch: the replaced entry's "disabled": true (Windsurf, Cursor) or
// Codex's enabled = false is the user's and stays, but init's entry is then one the client never
// starts though init wrote and proved it: the report says so (attack round atk22b). Red under
// mutant init-force-off-silent.
func TestForceSaysAKeptOffSwitch(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	for _, tc := range []struct {
		id, file, src string
		off           bool
	}{
		{"windsurf", "mcp_config.json", `{"mcpServers": {"sandbox": {"command": "old", "disabled": true}}}`, true},
		{"windsurf", "on.json", `{"mcpServers": {"sandbox": {"command": "old", "disabled": false}}}`, false},
		{"codex", "config.toml", "[mcp_servers.sandbox]\ncommand = \"old\"\nenabled = false\n", true},
		{"codex", "on.toml", "[mcp_servers.sandbox]\ncommand = \"old\"\nstartup_timeout_sec = 5\n", false},
	} {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.src), 0o600)
		c, err := ClientChange(Target{Client: client(t, tc.id), Scope: "user", Path: p}, "sandbox", e, true)
		if err != nil {
			t.Fatal(err)
		}
		if c.Off != tc.off {
			t.Errorf("%s %s: Off = %v, want %v\n%s", tc.id, tc.src, c.Off, tc.off, c.New)
			continue
		}
		pl := &Plan{name: "sandbox", Clients: ClientPlan{Changes: []FileChange{c}}}
		var w bytes.Buffer
		pl.Report(&w, &Written{})
		if said := strings.Contains(w.String(), "switched off"); said != tc.off {
			t.Errorf("%s %s: the report says it is switched off: %v, want %v\n%s", tc.id, tc.src, said, tc.off, w.String())
		}
	}
}

// TestForceSaysAKeptToolListLeavesToolsOut: a kept Gemini CLI includeTools or Codex
// enabled_tools names the replaced server's tools (another scheme's run_allowed_command): the
// client offers none of init's server's tools it leaves out, which the report names from the
// start check's tools/list (attack round atk22b). Red under mutant init-force-tools-filter-silent.
func TestForceSaysAKeptToolListLeavesToolsOut(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	probe := &Written{Probes: []Probe{{Tools: []string{"run_command", "run_code"}}}}
	for _, tc := range []struct {
		id, file, src, said string
	}{
		{"gemini", "a.json", `{"mcpServers": {"sandbox": {"command": "old", "includeTools": ["run_allowed_command()"]}}}`, "leaves out this server's run_command, run_code"},
		{"codex", "b.toml", "[mcp_servers.sandbox]\ncommand = \"old\"\nenabled_tools = [\"run_code\"]\n", "leaves out this server's run_command,"},
		{"gemini", "c.json", `{"mcpServers": {"sandbox": {"command": "old", "includeTools": ["run_command", "run_code(x)"]}}}`, ""},
		{"gemini", "d.json", `{"mcpServers": {"sandbox": {"command": "old", "includeTools": [], "timeout": 5}}}`, "leaves out this server's run_command, run_code"},
		{"gemini", "e.json", `{"mcpServers": {"sandbox": {"command": "old", "excludeTools": ["x"], "timeout": 5}}}`, ""},
	} {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.src), 0o600)
		c, err := ClientChange(Target{Client: client(t, tc.id), Scope: "user", Path: p}, "sandbox", e, true)
		if err != nil {
			t.Fatal(err)
		}
		pl := &Plan{name: "sandbox", Clients: ClientPlan{Changes: []FileChange{c}}}
		var w bytes.Buffer
		pl.Report(&w, probe)
		got := w.String()
		if tc.said == "" && strings.Contains(got, "leaves out") || tc.said != "" && !strings.Contains(got, tc.said) {
			t.Errorf("%s %s: the report:\n%s\nwant %q", tc.id, tc.src, got, tc.said)
		}
	}
}

// TestForceSaysKeptTrust: a replaced entry's trust (Gemini CLI's trust: true, Cline's
// autoApprove, Codex's approval modes) is the user's and stays, but it was given to the old
// server: the report names it, with its value (atk22b, left: kept without a word). Red under
// mutant init-force-trust-silent.
func TestForceSaysKeptTrust(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	for _, tc := range []struct {
		id, file, src, said string
	}{
		{"gemini", "a.json", `{"mcpServers": {"sandbox": {"command": "old", "trust": true, "timeout": 5}}}`, "keeps trust = true"},
		{"gemini", "b.json", `{"mcpServers": {"sandbox": {"command": "old", "trust": false}}}`, ""},
		{"cursor", "c.json", `{"mcpServers": {"sandbox": {"command": "old", "autoApprove": ["run_command"]}}}`, `keeps autoApprove = ["run_command"]`},
		{"codex", "d.toml", "[mcp_servers.sandbox]\ncommand = \"old\"\ndefault_tools_approval_mode = \"approve\"\n", `keeps default_tools_approval_mode = "approve"`},
		{"codex", "e.toml", "[mcp_servers.sandbox]\ncommand = \"old\"\nstartup_timeout_sec = 5\n", ""},
	} {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.src), 0o600)
		c, err := ClientChange(Target{Client: client(t, tc.id), Scope: "user", Path: p}, "sandbox", e, true)
		if err != nil {
			t.Fatal(err)
		}
		pl := &Plan{name: "sandbox", Clients: ClientPlan{Changes: []FileChange{c}}}
		var w bytes.Buffer
		pl.Report(&w, &Written{})
		got := w.String()
		if tc.said == "" && strings.Contains(got, "trust you gave") || tc.said != "" && (!strings.Contains(got, tc.said) || !strings.Contains(got, "trust you gave")) {
			t.Errorf("%s %s: the report:\n%s\nwant %q", tc.id, tc.src, got, tc.said)
		}
	}
}

// --force rewrites the replaced entry whole: the user's comments in it go (the backup has them),
// and the report names them; comments elsewhere in the file stay, and are not named (trial32 F4).
func TestForceSaysWhichCommentsWentWithTheEntry(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	for _, tc := range []struct {
		id, file, src string
		lost          []string
	}{
		{"gemini", "a.json", "{\n  // my servers\n  \"mcpServers\": {\"sandbox\": {\n    \"command\": \"old\",\n    // the CI box is slow\n    \"timeout\": 60000, /* never trust it */ \"trust\": false,\n    \"x\": \"http://a // not a comment\"}}}\n",
			[]string{"// the CI box is slow", "/* never trust it */"}},
		{"codex", "b.toml", "# mine\n[mcp_servers.sandbox]\ncommand = \"old\"\nstartup_timeout_sec = 30  # my slow laptop\nargs = [\"a # not a comment\", '''b # nor this''']\n",
			[]string{"# my slow laptop"}},
		{"cursor", "c.json", "{\"mcpServers\": {\"sandbox\": {\"command\": \"old\"}}} // after\n", nil},
	} {
		p := filepath.Join(dir, tc.file)
		os.WriteFile(p, []byte(tc.src), 0o600)
		c, err := ClientChange(Target{Client: client(t, tc.id), Scope: "user", Path: p}, "sandbox", e, true)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(c.LostComments, tc.lost) {
			t.Errorf("%s: lost comments %q, want %q\nnew:\n%s", tc.id, c.LostComments, tc.lost, c.New)
		}
		pl := &Plan{name: "sandbox", Clients: ClientPlan{Changes: []FileChange{c}}}
		var w bytes.Buffer
		pl.Report(&w, &Written{})
		if said := strings.Contains(w.String(), "your comments in it"); said != (tc.lost != nil) {
			t.Errorf("%s: the report:\n%s", tc.id, w.String())
		}
	}
}

// A client config init makes is the user's alone (0600, as Claude Code makes ~/.claude.json):
// clients keep the mode they find, and the file comes to hold servers' env values, accounts and
// history. One that exists keeps its own mode (trial32 F13).
func TestNewClientConfigIsTheUsersAlone(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	fresh, kept := filepath.Join(dir, ".claude.json"), filepath.Join(dir, "mcp.json")
	os.WriteFile(kept, []byte(`{"mcpServers": {}}`), 0o644)
	os.Chmod(kept, 0o644)
	var cs []FileChange
	for _, tg := range []Target{{Client: client(t, "claude-code"), Scope: "user", Path: fresh}, {Client: client(t, "cursor"), Scope: "user", Path: kept}} {
		c, err := ClientChange(tg, "sandbox", e, false)
		if err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	if _, err := Apply(cs); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]os.FileMode{fresh: 0o600, kept: 0o644} {
		if st, err := os.Stat(p); err != nil || st.Mode().Perm() != want {
			t.Errorf("%s: %v %v, want mode %v", p, st.Mode(), err, want)
		}
	}
}
