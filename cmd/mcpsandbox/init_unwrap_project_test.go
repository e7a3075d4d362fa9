package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
)

// unwrapFixture is a HOME with init --wrap's records of entries named db in two projects, as
// init --wrap leaves them: each entry wrapped in its config, its original in a record.
type unwrapFixture struct {
	home, dir, projA, projB string
}

func newUnwrapFixture(t *testing.T) *unwrapFixture {
	t.Helper()
	root := t.TempDir()
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r // Claude Code keys its local scope by the real path
	}
	f := &unwrapFixture{home: filepath.Join(root, "home"), projA: filepath.Join(root, "projA"), projB: filepath.Join(root, "projB")}
	for _, d := range []string{f.home, f.projA, f.projB} {
		os.MkdirAll(d, 0o755)
	}
	t.Setenv("HOME", f.home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(root, "state"))
	f.dir = filepath.Join(root, "config", "mcpsandbox", string(wrapScheme()))
	return f
}

// entries are db's original and wrapped bytes in project p.
func (f *unwrapFixture) entries(p, policy string) (orig, wrapped string) {
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	orig = `{"command": "/opt/srv", "args": [` + q(filepath.Base(p)) + `]}`
	wrapped = `{"command": "/opt/mcpsandbox", "args": ["wrap", "--policy", ` + q(policy) + `, "--", "/opt/srv", ` + q(filepath.Base(p)) + `]}`
	return orig, wrapped
}

// record writes the record init --wrap keeps for db in config under keys.
func (f *unwrapFixture) record(t *testing.T, client, scope, config, policy string, keys []string, orig, wrapped string) {
	t.Helper()
	r := generate.WrapRecord{Version: 1, Client: client, Scope: scope, Format: "json", Config: config, Keys: keys, Name: "db",
		Policy: policy, Original: orig, Wrapped: wrapped, PolicyCreated: true}
	b, _ := json.Marshal(r)
	os.MkdirAll(f.dir, 0o700)
	if err := os.WriteFile(policy+generate.WrapRecordSuffix, b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(policy, []byte("version = 1\n"), 0o644)
}

// projectFiles wraps db in both projects' .mcp.json (claude-code:project).
func (f *unwrapFixture) projectFiles(t *testing.T) {
	t.Helper()
	for i, p := range []string{f.projA, f.projB} {
		pol := filepath.Join(f.dir, "claude-code-project-db"+[]string{"", "-2"}[i]+".toml")
		orig, wrapped := f.entries(p, pol)
		cfg := filepath.Join(p, ".mcp.json")
		os.WriteFile(cfg, []byte(`{"mcpServers": {"db": `+wrapped+`}}`+"\n"), 0o644)
		f.record(t, "claude-code", "project", cfg, pol, []string{"mcpServers", "db"}, orig, wrapped)
	}
}

func (f *unwrapFixture) wrappedIn(t *testing.T, p string) bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(p, ".mcp.json"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Contains(string(b), `"wrap"`)
}

// init --unwrap in one project restores that project's entry, not another project's entry of the
// same name (a name is unique in one config only): the other is named as left in place, with the
// command that restores it; nothing asked for restored here is exit status 1 (atk35 F8).
func TestInitUnwrapThisProjectOnly(t *testing.T) {
	f := newUnwrapFixture(t)
	f.projectFiles(t)
	for _, args := range [][]string{
		{"init", "--unwrap", "db", "--client", "claude-code:project", "--yes", "--project", f.projB},
	} {
		out, _, err := runCLI(args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		if f.wrappedIn(t, f.projB) || !f.wrappedIn(t, f.projA) {
			t.Fatalf("%v in project B: B wrapped %v, A wrapped %v (want B restored, A left wrapped):\n%s", args, f.wrappedIn(t, f.projB), f.wrappedIn(t, f.projA), out)
		}
		want := "left in place, in other projects:\n  \"db\" in " + filepath.Join(f.projA, ".mcp.json") +
			" (restore it with: mcpsandbox init --unwrap db --client claude-code:project --project " + f.projA + ")"
		if !strings.Contains(out, want) {
			t.Errorf("%v: output does not name A's entry as left in place:\n%s\nwant:\n%s", args, out, want)
		}
	}
	// Again in B: nothing of B's is wrapped; A's is named, not restored, and the run fails.
	out, _, err := runCLI("init", "--unwrap", "db", "--yes", "--project", f.projB)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !f.wrappedIn(t, f.projA) || !strings.Contains(out, "left in place, in other projects:") {
		t.Errorf("second unwrap in B: %v, A wrapped %v:\n%s", err, f.wrappedIn(t, f.projA), out)
	}
	// --unwrap all, with no --client, in A: A's own.
	out, _, err = runCLI("init", "--unwrap", "all", "--yes", "--project", f.projA)
	if err != nil || f.wrappedIn(t, f.projA) {
		t.Errorf("unwrap all in A: %v, A wrapped %v:\n%s", err, f.wrappedIn(t, f.projA), out)
	}
}

// The same for Claude Code's local scope: one file, ~/.claude.json, a key for each project.
func TestInitUnwrapLocalScopeThisProjectOnly(t *testing.T) {
	f := newUnwrapFixture(t)
	cfg := filepath.Join(f.home, ".claude.json")
	projects := map[string]any{}
	for i, p := range []string{f.projA, f.projB} {
		pol := filepath.Join(f.dir, "claude-code-db"+[]string{"", "-2"}[i]+".toml")
		orig, wrapped := f.entries(p, pol)
		projects[p] = map[string]any{"mcpServers": map[string]json.RawMessage{"db": json.RawMessage(wrapped)}}
		f.record(t, "claude-code", "local", cfg, pol, []string{"projects", p, "mcpServers", "db"}, orig, wrapped)
	}
	b, _ := json.MarshalIndent(map[string]any{"projects": projects}, "", "  ")
	os.WriteFile(cfg, b, 0o600)
	// the records' Wrapped bytes are the entries as MarshalIndent wrote them: the same value
	out, _, err := runCLI("init", "--unwrap", "db", "--client", "claude-code", "--yes", "--project", f.projB)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var now struct {
		Projects map[string]struct {
			MCPServers map[string]struct{ Args []string } `json:"mcpServers"`
		}
	}
	b, _ = os.ReadFile(cfg)
	if err := json.Unmarshal(b, &now); err != nil {
		t.Fatal(err)
	}
	if a := now.Projects[f.projA].MCPServers["db"].Args; len(a) == 0 || a[0] != "wrap" {
		t.Errorf("project A's local entry was restored by an unwrap in B: %q\n%s", a, out)
	}
	if a := now.Projects[f.projB].MCPServers["db"].Args; len(a) != 1 {
		t.Errorf("project B's local entry not restored: %q\n%s", a, out)
	}
	if !strings.Contains(out, "--client claude-code --project "+f.projA) {
		t.Errorf("A's entry not named with its unwrap command:\n%s", out)
	}
}

// An entry the config shows wrapped whose record is gone (the wrap policy directory removed, a
// new machine with synced dotfiles) is not "nothing to restore" (exit 0) any more: named, it is
// refused with the command that restores it from its args, exit 1; with --force its command and
// args become what follows "--" (its other keys stay); init --wrap of it takes it out of wrap
// first and wraps it anew. A name asked for that is nowhere is exit 1 too (trial36 F2). Red
// under mutants init-unwrap-orphans, init-wrap-orphans and init-unwrap-missing-exit0.
func TestInitUnwrapWithoutRecord(t *testing.T) {
	f := newUnwrapFixture(t)
	cfg := filepath.Join(f.projA, ".mcp.json")
	wrapped := `{"mcpServers": {"db": {"command": "/opt/mcpsandbox", "args": ["wrap", "--policy", "/gone/db.toml", "--", "/opt/srv", "a b"], "env": {"K": "v"}}}}` + "\n"
	os.WriteFile(cfg, []byte(wrapped), 0o644)
	code := func(err error) int {
		if ee, ok := err.(*exitError); ok {
			return ee.code
		}
		if err != nil {
			return -1
		}
		return 0
	}
	out, _, err := runCLI("init", "--unwrap", "db", "--client", "claude-code:project", "--yes", "--project", f.projA)
	if code(err) != 1 || !strings.Contains(out, "saved original of it is gone") ||
		!strings.Contains(out, "mcpsandbox init --unwrap db --client claude-code:project --force --project "+f.projA) {
		t.Errorf("--unwrap db without its record: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(cfg); string(b) != wrapped {
		t.Errorf("the config changed without --force:\n%s", b)
	}
	if out, _, err := runCLI("init", "--unwrap", "nosuch", "--yes", "--project", f.projA); code(err) != 1 {
		t.Errorf("--unwrap nosuch: %v, want exit 1\n%s", err, out)
	}
	out, _, err = runCLI("init", "--unwrap", "db", "--client", "claude-code:project", "--yes", "--force", "--project", f.projA)
	want := `{"mcpServers": {"db": {"command": "/opt/srv", "args": ["a b"], "env": {"K": "v"}}}}` + "\n"
	if b, _ := os.ReadFile(cfg); err != nil || string(b) != want || !strings.Contains(out, "restored from its args") {
		t.Errorf("--unwrap db --force: %v\n%s\nthe config:\n%s\nwant:\n%s", err, out, b, want)
	}
	// --unwrap all restores it, and says nothing of "nothing to restore" after (trial39 F14)
	os.WriteFile(cfg, []byte(wrapped), 0o644)
	out, _, err = runCLI("init", "--unwrap", "all", "--client", "claude-code:project", "--yes", "--force", "--project", f.projA)
	if err != nil || !strings.Contains(out, "restored from its args") || strings.Contains(out, "nothing to restore") {
		t.Errorf("--unwrap all --force: %v\n%s", err, out)
	}
	// init --wrap of it: taken out of wrap first, then wrapped (here its server, /opt/srv, does
	// not start: put back, as it was before this wrap)
	os.WriteFile(cfg, []byte(wrapped), 0o644)
	out, _, _ = runCLI("init", "--wrap", "db", "--client", "claude-code:project", "--yes", "--project", f.projA)
	if !strings.Contains(out, `taken out of wrap first: "db"`) || strings.Contains(out, "runs through mcpsandbox wrap already") {
		t.Errorf("--wrap db without its record:\n%s", out)
	}
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "/gone/db.toml") {
		t.Errorf("the entry still runs its lost policy:\n%s", b)
	}
}
