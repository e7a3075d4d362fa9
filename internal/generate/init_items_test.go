package generate

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A dotfiles layout: configs that are symbolic links (relative, absolute, dangling) into a
// dotfiles directory. The link must stay a link, the target get the new text, the backup sit
// in the state directory (beside the target it lay in a workspace the dotfiles may be: atk40 F6).
func TestWriteFileSafelyThroughLinks(t *testing.T) {
	dir := t.TempDir()
	state, err := ProjectBackupDir()
	if err != nil {
		t.Fatal(err)
	}
	dots := filepath.Join(dir, "dotfiles")
	cfg := filepath.Join(dir, "home", ".cursor")
	os.MkdirAll(dots, 0o755)
	os.MkdirAll(cfg, 0o755)
	for _, c := range []struct{ name, link string }{
		{"relative", "../../dotfiles/relative.json"},
		{"absolute", filepath.Join(dots, "absolute.json")},
	} {
		target := filepath.Join(dots, c.name+".json")
		os.WriteFile(target, []byte("old "+c.name), 0o600)
		link := filepath.Join(cfg, c.name+".json")
		if err := os.Symlink(c.link, link); err != nil {
			t.Fatal(err)
		}
		for i, want := range []string{"new", "newer"} {
			r, err := WriteFileSafely(link, []byte(want), 0o644)
			if err != nil {
				t.Fatalf("%s #%d: %v", c.name, i, err)
			}
			if l, err := os.Readlink(link); err != nil || l != c.link {
				t.Errorf("%s: the link became %q (%v), want it kept as %q", c.name, l, err, c.link)
			}
			if b, _ := os.ReadFile(target); string(b) != want {
				t.Errorf("%s: target holds %q, want %q", c.name, b, want)
			}
			if !r.Linked() || r.Target != target || filepath.Dir(r.Backup) != state {
				t.Errorf("%s: result %+v: want the target in %s, its backup in %s", c.name, r, dots, state)
			}
			if _, _, m := ownerMode(t, target); m != 0o600 {
				t.Errorf("%s: mode %v", c.name, m)
			}
		}
		backups, _ := filepath.Glob(backupBase(target, state) + ".bak-*")
		if len(backups) != 2 {
			t.Errorf("%s: backups %v: two writes in one second must keep two backups", c.name, backups)
		}
		if b, _ := os.ReadFile(backups[0]); string(b) != "old "+c.name {
			t.Errorf("%s: first backup %s holds %q", c.name, backups[0], b)
		}
	}
	// A dangling link: its target is created, the link stays.
	dl := filepath.Join(cfg, "dangling.json")
	os.Symlink("../../dotfiles/later.json", dl)
	if _, err := WriteFileSafely(dl, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dots, "later.json")); string(b) != "{}" {
		t.Errorf("dangling link target holds %q", b)
	}
	if fi, _ := os.Lstat(dl); fi.Mode()&os.ModeSymlink == 0 {
		t.Error("dangling link replaced by a file")
	}
	// A loop is refused with its name.
	loop := filepath.Join(cfg, "loop.json")
	os.Symlink("loop.json", loop)
	if _, err := WriteFileSafely(loop, []byte("x"), 0o644); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("link loop: %v", err)
	}
}

// Run as root, a file owned by someone else keeps its owner, group and mode, and so does its backup.
func TestWriteFileSafelyKeepsOwner(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only root can give a file to another uid (the case is sudo mcpsandbox init)")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "settings.json")
	os.WriteFile(p, []byte("old"), 0o640)
	os.Chmod(p, 0o640)
	if err := os.Chown(p, 1000, 1001); err != nil {
		t.Fatal(err)
	}
	r, err := WriteFileSafely(p, []byte("new"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{p, r.Backup} {
		if u, g, m := ownerMode(t, f); u != 1000 || g != 1001 || m != 0o640 {
			t.Errorf("%s: %d:%d %v, want 1000:1001 0640", f, u, g, m)
		}
	}
	if r.Owner != "1000:1001" {
		t.Errorf("result owner %q", r.Owner)
	}
	// A new file in a directory someone else owns is theirs.
	os.Chown(dir, 1000, 1001)
	n := filepath.Join(dir, "new.json")
	if _, err := WriteFileSafely(n, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if u, g, _ := ownerMode(t, n); u != 1000 || g != 1001 {
		t.Errorf("new file owned by %d:%d, want the directory's 1000:1001", u, g)
	}
}

// Apply writes all or nothing: a failure puts back what was written before it, exactly.
func TestApplyAllOrNothing(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "new.json")
	os.WriteFile(a, []byte("A"), 0o600)
	ro := filepath.Join(dir, "ro.json")
	os.WriteFile(ro, []byte("R"), 0o444)
	cs := []FileChange{
		{Path: a, Old: []byte("A"), New: []byte("A2"), Existed: true, Mode: 0o644},
		{Path: b, New: []byte("B"), Mode: 0o644},
		{Path: ro, Old: []byte("R"), New: []byte("R2"), Existed: true, Mode: 0o644},
	}
	if _, err := Apply(cs); err == nil || !strings.Contains(err.Error(), "put back") {
		t.Fatalf("Apply: %v", err)
	}
	if got, _ := os.ReadFile(a); string(got) != "A" {
		t.Errorf("a holds %q", got)
	}
	if _, _, m := ownerMode(t, a); m != 0o600 {
		t.Errorf("a mode %v", m)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("left behind: %v (want a.json and ro.json only: no new file, no backup)", ents)
	}
}

// A UTF-8 byte order mark is tolerated and kept, in JSON and TOML configs.
func TestMergeKeepsBOM(t *testing.T) {
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	for id, in := range map[string]string{
		"cursor": "\uFEFF{\n  \"mcpServers\": {}\n}\n",
		"codex":  "\uFEFFmodel = \"x\"\n",
	} {
		out, err := Merge(client(t, id), []byte(in), "sandbox", e, false)
		if err != nil {
			t.Fatalf("%s: %v", id, err)
		}
		if !strings.HasPrefix(string(out), "\uFEFF") || strings.Count(string(out), "\uFEFF") != 1 {
			t.Errorf("%s: the BOM was not kept once:\n%q", id, out)
		}
		checkEntry(t, client(t, id), []byte(strings.TrimPrefix(string(out), "\uFEFF")), e)
	}
}

// TOML errors point at the line that holds the mistake.
func TestTOMLErrorLine(t *testing.T) {
	_, err := Merge(client(t, "codex"), []byte("model = \"x\"\n[mcp_servers.x\ncommand = \"a\"\n"), "sandbox", NewServerEntry("/b", "/p"), false)
	var se *SyntaxError
	if !errors.As(err, &se) || se.Line != 2 || se.Col != 15 || strings.Contains(se.Msg, `'\n'`) {
		t.Fatalf("got %v, want 2:15 naming the end of the line", err)
	}
}

func TestDiffRemovalsFirst(t *testing.T) {
	d := Diff("f", "a\nb\nc\n", "a\nB\nc\n")
	if i, j := strings.Index(d, "\n-b"), strings.Index(d, "\n+B"); i < 0 || j < 0 || i > j {
		t.Errorf("want -b before +B:\n%s", d)
	}
}

// Claude Code's default scope is local, as `claude mcp add`: ~/.claude.json, under the project.
func TestClaudeCodeLocalScope(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	env := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: proj}
	tg, err := ResolveTarget("claude-code", env)
	if err != nil || tg.Scope != "local" || tg.Path != filepath.Join(home, ".claude.json") || !strings.Contains(tg.About(), "claude mcp add") {
		t.Fatalf("target %+v %v", tg, err)
	}
	in := "{\n  \"numStartups\": 3,\n  \"projects\": {\n    \"/other\": {\n      \"mcpServers\": {}\n    }\n  }\n}\n"
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	out, err := Merge(tg.Client, []byte(in), "sandbox", e, false)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NumStartups int
		Projects    map[string]struct {
			MCPServers map[string]struct {
				Command string
				Args    []string
				Type    string
			}
		}
	}
	if err := jsonUnmarshalStrict(out, &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := doc.Projects[proj].MCPServers["sandbox"]
	if got.Command != e.Command || got.Type != "stdio" || doc.NumStartups != 3 || len(doc.Projects) != 2 {
		t.Fatalf("merged:\n%s", out)
	}
	// Into that project's existing servers, too.
	again, err := Merge(tg.Client, out, "other", e, false)
	if err != nil || jsonUnmarshalStrict(again, &doc) != nil || len(doc.Projects[proj].MCPServers) != 2 {
		t.Fatalf("second server: %v\n%s", err, again)
	}
}

func TestExistsSaysItOnce(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "mcp.json")
	os.WriteFile(p, []byte(`{"mcpServers": {"sandbox": {"command": "x"}}}`), 0o644)
	_, err := ClientChange(Target{Client: client(t, "cursor"), Scope: "user", Path: p}, "sandbox", NewServerEntry("/b", "/p"), false)
	if !errors.Is(err, ErrExists) || strings.Count(err.Error(), "already") > 1 || strings.Count(err.Error(), "sandbox") != 1 {
		t.Fatalf("%v", err)
	}
}

// StartCheck reports what a server that cannot start said, and what one that can offers.
func TestStartCheck(t *testing.T) {
	_, err := StartCheck(context.Background(), ServerEntry{Command: "/bin/sh", Args: []string{"-c", "echo policy is broken >&2; exit 3"}}, os.Environ(), nil, 10*time.Second)
	var se *StartError
	if !errors.As(err, &se) || !strings.Contains(se.Stderr, "policy is broken") || !strings.Contains(err.Error(), "exited before answering") {
		t.Fatalf("%v", err)
	}
	_, err = StartCheck(context.Background(), ServerEntry{Command: "/bin/sh", Args: []string{"-c", "exec sleep 30"}}, os.Environ(), nil, 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "no MCP answer within") {
		t.Fatalf("silent server: %v", err)
	}
}

// Two scopes in one file (claude-code and claude-code:user, both ~/.claude.json) plan as one
// change holding both entries, not two writes where the second loses the first.
func TestTwoScopesOneFile(t *testing.T) {
	home, proj := t.TempDir(), t.TempDir()
	env := Env{Home: home, ConfigDir: filepath.Join(home, ".config"), Project: proj}
	os.WriteFile(filepath.Join(home, ".claude.json"), []byte("{\"numStartups\": 1}\n"), 0o600)
	local, _ := ResolveTarget("claude-code", env)
	user, _ := ResolveTarget("claude-code:user", env)
	e := NewServerEntry("/bin/mcpsandbox", "/p.toml")
	c, err := ClientChange(local, "sandbox", e, false)
	if err == nil {
		c, err = c.Add(user, "sandbox", e, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		NumStartups int
		MCPServers  map[string]any
		Projects    map[string]struct{ MCPServers map[string]any }
	}
	if err := jsonUnmarshalStrict(c.New, &doc); err != nil || doc.NumStartups != 1 || doc.MCPServers["sandbox"] == nil || doc.Projects[proj].MCPServers["sandbox"] == nil {
		t.Fatalf("%v\n%s", err, c.New)
	}
}

// Install: an entry that does not answer MCP leaves the policy it would have replaced, and the
// client config, exactly as they were.
func TestInstallPutsBackWhenTheEntryFails(t *testing.T) {
	dir := t.TempDir()
	pol, cfg := filepath.Join(dir, "policy.toml"), filepath.Join(dir, "mcp.json")
	os.WriteFile(pol, []byte("old policy"), 0o640)
	os.WriteFile(cfg, []byte("{}"), 0o600)
	pc := FileChange{Path: pol, Old: []byte("old policy"), New: []byte("new policy"), Existed: true, Mode: 0o644}
	cc := FileChange{Path: cfg, Old: []byte("{}"), New: []byte(`{"mcpServers": {}}`), Existed: true, Mode: 0o644}
	e := ServerEntry{Command: "/bin/sh", Args: []string{"-c", "cat " + pol + " >&2; exit 1"}}
	_, _, err := Install(context.Background(), pc, []FileChange{cc}, e, []ProofRun{{Env: os.Environ()}}, nil, 10*time.Second)
	if err == nil || !strings.Contains(err.Error(), "new policy") || !strings.Contains(err.Error(), "nothing was changed") {
		t.Fatalf("the check must run against the new policy, then report: %v", err)
	}
	for f, want := range map[string]string{pol: "old policy", cfg: "{}"} {
		if b, _ := os.ReadFile(f); string(b) != want {
			t.Errorf("%s holds %q", f, b)
		}
	}
	if _, _, m := ownerMode(t, pol); m != 0o640 {
		t.Errorf("policy mode %v", m)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 2 {
		t.Errorf("left behind: %v", ents)
	}
}

// A config another program rewrote after init read it is not overwritten.
func TestApplyRefusesAFileChangedMeanwhile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".claude.json")
	os.WriteFile(p, []byte(`{"a": 1}`), 0o600)
	c := FileChange{Path: p, Old: []byte(`{"a": 1}`), New: []byte(`{"a": 1, "mcpServers": {}}`), Existed: true}
	os.WriteFile(p, []byte(`{"a": 2}`), 0o600) // the client wrote it meanwhile
	if _, err := Apply([]FileChange{c}); err == nil || !strings.Contains(err.Error(), "changed while init was running") {
		t.Fatalf("%v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != `{"a": 2}` {
		t.Errorf("holds %s", b)
	}
}

// An entry of another name that runs this very server (added by hand: claude mcp add mybox --
// mcpsandbox serve --policy P; or by an init under another name) gets no second one beside it:
// the client would start two serves and list every tool twice (trial33 F3). The file is left as
// it is, and the change says which entry it is; a server that differs is added. Red with mutant
// init-same-server-twice.
func TestNoSecondEntryForTheSameServer(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ client, text string }{
		{"cursor", `{"mcpServers": {"mybox": {"type": "stdio", "command": "/b", "args": ["serve", "--policy", "/p"], "env": {}}}}`},
		{"codex", "[mcp_servers.mybox]\ncommand = \"/b\"\nargs = [\"serve\", \"--policy\", \"/p\"]\n"},
	} {
		p := filepath.Join(dir, c.client+".conf")
		os.WriteFile(p, []byte(c.text), 0o600)
		tg := Target{Client: client(t, c.client), Scope: "user", Path: p}
		ch, err := ClientChange(tg, "sandbox", NewServerEntry("/b", "/p"), false)
		if err != nil || ch.SameAs != "mybox" || string(ch.New) != c.text {
			t.Errorf("%s: the same server as mybox: %v, SameAs %q, changed %v", c.client, err, ch.SameAs, string(ch.New) != c.text)
		}
		ch, err = ClientChange(tg, "sandbox", NewServerEntry("/b", "/other.toml"), false)
		if err != nil || ch.SameAs != "" || string(ch.New) == c.text {
			t.Errorf("%s: another policy: %v, SameAs %q, added %v", c.client, err, ch.SameAs, string(ch.New) != c.text)
		}
	}
}

// atk39b F1: an entry of another name with init's command and args but its own env, cwd or
// envFile (or a key init does not know) starts another server: init adds its own beside it,
// never calling it "this very server". Red with mutant init-portable-same-transport.
func TestNoSecondEntryForAnotherStart(t *testing.T) {
	dir := t.TempDir()
	for _, extra := range []string{`"env": {"PATH": "./tools:/usr/bin"}`, `"cwd": ".."`, `"envFile": ".env"`, `"startVia": "x"`} {
		text := `{"mcpServers": {"mybox": {"type": "stdio", "command": "/b", "args": ["serve", "--policy", "/p"], ` + extra + `}}}`
		p := filepath.Join(dir, "cursor.conf")
		os.WriteFile(p, []byte(text), 0o600)
		tg := Target{Client: client(t, "cursor"), Scope: "user", Path: p}
		ch, err := ClientChange(tg, "sandbox", NewServerEntry("/b", "/p"), false)
		if err != nil || ch.SameAs != "" || string(ch.New) == text {
			t.Errorf("%s: %v, SameAs %q, added %v", extra, err, ch.SameAs, string(ch.New) != text)
		}
	}
}
