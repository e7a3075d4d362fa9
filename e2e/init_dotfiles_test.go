package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

type fileState struct {
	uid, gid int
	mode     os.FileMode
}

func stateOf(t *testing.T, path string) fileState {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	uid, gid := fileOwner(t, st)
	return fileState{uid, gid, st.Mode().Perm()}
}

// A dotfiles layout: ~/.cursor/mcp.json a relative link into ~/dotfiles, ~/.codex/config.toml an
// absolute one, ~/.gemini a linked directory; every target owned by uid 1000 (when root can
// arrange that), with its own mode. After init, and after a second init that changes the entry,
// each link is still the same link, its target holds the entry and everything it held before,
// and target and backup keep owner, group and mode; the backups are in the state directory.
func TestInitDotfilesLayout(t *testing.T) {
	e := newInitEnv(t)
	state := filepath.Join(e.home, "state")
	e.env = append(e.env, "XDG_STATE_HOME="+state)
	root := os.Geteuid() == 0
	if !root {
		t.Log("not root: owners cannot be given away, so only links and modes are checked (the owner half runs as root, as in CI)")
	}
	dots := filepath.Join(e.home, "dotfiles")
	os.MkdirAll(filepath.Join(dots, "gemini"), 0o755)
	type cfg struct {
		client, link, linkTo, target, text string
		mode                               os.FileMode
	}
	cfgs := []cfg{
		{"cursor", filepath.Join(e.home, ".cursor", "mcp.json"), "../dotfiles/cursor-mcp.json", filepath.Join(dots, "cursor-mcp.json"),
			"{\n  \"mcpServers\": {\n    \"github\": {\"command\": \"npx\"}\n  }\n}\n", 0o640},
		{"codex", filepath.Join(e.home, ".codex", "config.toml"), filepath.Join(dots, "codex.toml"), filepath.Join(dots, "codex.toml"),
			"model = \"o4-mini\"\n", 0o600},
		{"gemini", filepath.Join(e.home, ".gemini", "settings.json"), "", filepath.Join(dots, "gemini", "settings.json"),
			"{\n  \"theme\": \"dark\"\n}\n", 0o640},
	}
	if err := os.Symlink("dotfiles/gemini", filepath.Join(e.home, ".gemini")); err != nil {
		t.Fatal(err)
	}
	want := fileState{os.Geteuid(), os.Getegid(), 0}
	if root {
		want.uid, want.gid = 1000, 1000
	}
	var clients []string
	for _, c := range cfgs {
		write(t, c.target, c.text, c.mode)
		if root {
			if err := os.Chown(c.target, 1000, 1000); err != nil {
				t.Fatal(err)
			}
		}
		if c.linkTo != "" {
			os.MkdirAll(filepath.Dir(c.link), 0o755)
			if err := os.Symlink(c.linkTo, c.link); err != nil {
				t.Fatal(err)
			}
		}
		clients = append(clients, "--client", c.client)
	}
	ws := filepath.Join(e.home, "ws")
	for round, policyOut := range []string{"one.toml", "two.toml"} { // the second init changes the entry
		args := append([]string{"--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--yes", "--force",
			"--policy-out", filepath.Join(e.home, policyOut)}, clients...)
		out, stderr, code := e.run(t, "", args...)
		if code != 0 {
			t.Fatalf("init #%d: exit %d\n%s\n%s", round+1, code, out, stderr)
		}
		if !strings.Contains(out, "through the link") {
			t.Errorf("init #%d does not say it wrote through the links:\n%s", round+1, out)
		}
		for _, c := range cfgs {
			if c.linkTo != "" {
				if l, err := os.Readlink(c.link); err != nil || l != c.linkTo {
					t.Errorf("#%d %s: link is now %q (%v), want %q", round+1, c.client, l, err, c.linkTo)
				}
			}
			if fi, err := os.Lstat(filepath.Join(e.home, ".gemini")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
				t.Errorf("#%d: ~/.gemini is no longer a link", round+1)
			}
			b, err := os.ReadFile(c.target)
			if err != nil || !strings.Contains(string(b), policyOut) || !strings.Contains(string(b), c.text[:strings.IndexAny(c.text[2:], "\n")+2]) {
				t.Errorf("#%d %s: target %s:\n%s", round+1, c.client, c.target, b)
			}
			w := want
			w.mode = c.mode
			if got := stateOf(t, c.target); got != w {
				t.Errorf("#%d %s: target is %+v, want %+v", round+1, c.client, got, w)
			}
			// a config reached through a link is backed up in the state directory, beside
			// neither the link nor its target (which may lie in a workspace: atk40 F6)
			if beside, _ := filepath.Glob(c.target + ".bak-*"); len(beside) > 0 {
				t.Errorf("#%d %s: backups beside the target: %v", round+1, c.client, beside)
			}
			// (named after the path: the target's, or the one through ~/.gemini)
			backups, _ := filepath.Glob(filepath.Join(state, "mcpsandbox", "backups", "*%"+filepath.Base(c.target)+".bak-*"))
			if len(backups) != round+1 {
				t.Fatalf("#%d %s: backups in the state directory: %v", round+1, c.client, backups)
			}
			for _, bk := range backups {
				if got := stateOf(t, bk); got != w {
					t.Errorf("#%d %s: backup %s is %+v, want %+v", round+1, c.client, bk, got, w)
				}
			}
			if round == 0 {
				if b, _ := os.ReadFile(backups[0]); string(b) != c.text {
					t.Errorf("%s: backup holds %q", c.client, b)
				}
			}
		}
		if strays, _ := filepath.Glob(filepath.Join(e.home, ".cursor", "*.bak-*")); len(strays) > 0 {
			t.Errorf("backup written beside the link instead of the target: %v", strays)
		}
	}
}

// When the entry's command cannot serve, init changes nothing: not the client configs, not the
// policy it would have replaced; and it shows why, in the server's words. The command here is a
// stand-in for any scheme whose serve cannot start on this machine.
func TestInitNothingChangedWhenTheEntryCannotStart(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ws")
	if out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--client", "cursor", "--yes"); code != 0 {
		t.Fatalf("first init: %s %s", out, stderr)
	}
	cursor := filepath.Join(e.home, ".cursor", "mcp.json")
	pol := filepath.Join(e.config, "mcpsandbox", "policy.toml")
	before := map[string]string{}
	for _, f := range []string{cursor, pol} {
		b, _ := os.ReadFile(f)
		before[f] = string(b)
	}
	entriesBefore, _ := os.ReadDir(filepath.Dir(cursor))
	broken := filepath.Join(e.home, "broken-mcpsandbox")
	write(t, broken, "#!/bin/sh\necho 'scheme \"docker\" cannot run here: no engine' >&2\nexit 1\n", 0o755)
	out, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc,sort", "--workspace", ws, "--client", "cursor", "--client", "vscode",
		"--command", broken, "--yes", "--force")
	if code == 0 || !strings.Contains(stderr, "does not start") || !strings.Contains(stderr, "cannot run here: no engine") || !strings.Contains(stderr, "nothing was changed") {
		t.Fatalf("exit %d\n%s\n%s", code, out, stderr)
	}
	for f, want := range before {
		if b, _ := os.ReadFile(f); string(b) != want {
			t.Errorf("%s changed:\n%s", f, b)
		}
	}
	if entries, _ := os.ReadDir(filepath.Dir(cursor)); len(entries) != len(entriesBefore) {
		t.Errorf("files left beside the config: %v", entries)
	}
	if _, err := os.Stat(filepath.Join(e.project, ".vscode")); err == nil {
		t.Error("a new client config was written for an entry that cannot start")
	}
}

// What a scheme needs is checked before anything is written.
func TestInitSchemeNeedsCheckedFirst(t *testing.T) {
	e := newInitEnv(t)
	e.env = append(e.env, "DOCKER_HOST=unix://"+filepath.Join(e.home, "no-engine.sock"), "E2B_API_KEY=")
	for scheme, want := range map[string]string{"docker": "needs a running Docker engine", "e2b": "E2B_API_KEY"} {
		_, stderr, code := e.run(t, "", "--scheme", scheme, "--client", "cursor", "--yes")
		if code == 0 || !strings.Contains(stderr, want) || !strings.Contains(stderr, "Nothing was written") {
			t.Errorf("%s: exit %d %s", scheme, code, stderr)
		}
	}
	for _, d := range []string{filepath.Join(e.config, "mcpsandbox"), filepath.Join(e.home, ".cursor")} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s written although the scheme cannot run", d)
		}
	}
}

func TestInitMessages(t *testing.T) {
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "ws")
	base := []string{"--scheme", "allowlist", "--allow", "wc", "--workspace", ws, "--yes"}
	// --command naming a missing binary.
	for _, c := range []string{filepath.Join(e.home, "nope", "mcpsandbox"), "no-such-mcpsandbox-binary"} {
		_, stderr, code := e.run(t, "", append(base, "--client", "cursor", "--command", c)...)
		if code == 0 || !strings.Contains(stderr, "--command") {
			t.Errorf("--command %s: exit %d %s", c, code, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox")); err == nil {
		t.Error("a refused --command still wrote the policy")
	}
	// A UTF-8 BOM is kept.
	cursor := filepath.Join(e.home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o755)
	write(t, cursor, "\uFEFF{\n  \"mcpServers\": {}\n}\n", 0o644)
	if out, stderr, code := e.run(t, "", append(base, "--client", "cursor")...); code != 0 {
		t.Fatalf("BOM config: %s %s", out, stderr)
	}
	if b, _ := os.ReadFile(cursor); !strings.HasPrefix(string(b), "\uFEFF{") || !strings.Contains(string(b), `"sandbox"`) {
		t.Errorf("BOM config became:\n%q", b)
	}
	// A TOML mistake is reported on its line.
	codex := filepath.Join(e.home, ".codex", "config.toml")
	os.MkdirAll(filepath.Dir(codex), 0o755)
	write(t, codex, "model = \"x\"\n[mcp_servers.x\ncommand = \"a\"\n", 0o644)
	if _, stderr, code := e.run(t, "", append(base, "--client", "codex")...); code == 0 || !strings.Contains(stderr, codex+":2:15:") {
		t.Errorf("unclosed table on line 2: exit %d %s", code, stderr)
	}
	// --help: --verify is a plain switch; the terminal sentence says what happens.
	out, _, _ := e.run(t, "", "--help")
	if !regexp.MustCompile(`(?m)^\s+--verify\s{2,}run`).MatchString(out) {
		t.Errorf("--verify is not shown as a plain switch:\n%s", out)
	}
	if strings.Contains(out, "(or no terminal)") || !strings.Contains(out, "without a") {
		t.Errorf("help on terminals:\n%s", out)
	}
	if _, stderr, code := e.run(t, "", "--scheme", "allowlist", "--allow", "wc", "--workspace", ws); code == 0 || !strings.Contains(stderr, "--yes") {
		t.Errorf("no terminal, no --yes: exit %d %s", code, stderr)
	}
}
