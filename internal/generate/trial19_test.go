package generate

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSameEntryWithTheUsersKeys: init run again where the user has since tuned the entry init
// wrote (Gemini CLI's "timeout" and "trust", Codex's startup_timeout_sec) is the same server:
// "already configured", the file as it is. It was "already has a different server named
// "sandbox"", and --force then replaced the entry, dropping the user's keys.
func TestSameEntryWithTheUsersKeys(t *testing.T) {
	dir := t.TempDir()
	e := NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/.config/mcpsandbox/policy.toml")
	gemini := `{
  // mine
  "mcpServers": {
    "fs": { "command": "node", "args": ["fs.js"] },
    "sandbox": {
      "command": "/home/me/bin/mcpsandbox",
      "args": ["serve", "--policy", "/home/me/.config/mcpsandbox/policy.toml"],
      "timeout": 60000,
      "trust": true
    }
  }
}
`
	gp := filepath.Join(dir, "settings.json")
	os.WriteFile(gp, []byte(gemini), 0o600)
	gt := Target{Client: client(t, "gemini"), Scope: "user", Path: gp}
	c, err := ClientChange(gt, "sandbox", e, false)
	if err != nil || !c.Unchanged() || string(c.New) != gemini {
		t.Fatalf("the entry with the user's timeout and trust: %v, unchanged %v\n%s", err, c.Unchanged(), c.New)
	}
	// --force (given for a changed policy) does not replace it either: the user's keys stay
	if c, err := ClientChange(gt, "sandbox", e, true); err != nil || !c.Unchanged() {
		t.Fatalf("the entry with the user's keys, under --force: %v, unchanged %v\n%s", err, c.Unchanged(), c.New)
	}
	// An empty env and the type every command entry has (as Claude Code's `mcp add` writes
	// them) beside the user's keys: init's replacement drops both, the same server all the same.
	for _, empty := range []string{`"env": {}`, `"type": "stdio"`, `"env": {}, "type": "stdio"`} {
		with := strings.Replace(gemini, `"trust": true`, `"trust": true, `+empty, 1)
		os.WriteFile(gp, []byte(with), 0o600)
		if c, err := ClientChange(gt, "sandbox", e, false); err != nil || !c.Unchanged() || string(c.New) != with {
			t.Errorf("the entry with the user's keys and %s: %v, unchanged %v, want it left as it is", empty, err, c.Unchanged())
		}
	}
	// A key that changes how the server is started (cwd, env, envFile, or one init does not
	// know) makes it another server, whatever its command and args (atk39b F1).
	for _, extra := range []string{`"cwd": "/home/me/proj"`, `"env": {"PATH": "./tools:/usr/bin"}`, `"envFile": ".env"`, `"startVia": "x"`} {
		with := strings.Replace(gemini, `"trust": true`, `"trust": true, `+extra, 1)
		os.WriteFile(gp, []byte(with), 0o600)
		key := strings.Trim(strings.SplitN(extra, ":", 2)[0], `"`)
		if _, err := ClientChange(gt, "sandbox", e, false); !errors.Is(err, ErrExists) || !strings.Contains(err.Error(), "with another "+key) {
			t.Errorf("the entry with the user's keys and %s: %v, want ErrExists naming %s", extra, err, key)
		}
	}
	gemini = strings.Replace(gemini, `"trust": true`, `"trust": true, "cwd": "/home/me/proj"`, 1)
	os.WriteFile(gp, []byte(gemini), 0o600)
	other := NewServerEntry("/home/me/bin/mcpsandbox", "/home/me/.config/mcpsandbox/docker.toml")
	// A different entry under --force replaces the server (its command, args and cwd) and
	// keeps the user's settings of it in the client (trial19: they were dropped).
	c, err = ClientChange(gt, "sandbox", other, true)
	if err != nil || c.Unchanged() || !strings.Contains(string(c.New), "docker.toml") || strings.Contains(string(c.New), "/home/me/proj") ||
		!strings.Contains(string(c.New), `"timeout": 60000`) || !strings.Contains(string(c.New), `"trust": true`) {
		t.Fatalf("a different entry under --force: the server replaced, the user's timeout and trust kept: %v\n%s", err, c.New)
	}
	if _, err := ClientChange(gt, "sandbox", other, false); !errors.Is(err, ErrExists) {
		t.Fatalf("a different entry (another policy) with extra keys: %v, want ErrExists", err)
	}

	codex := "[mcp_servers.sandbox]\ncommand = \"/home/me/bin/mcpsandbox\"\nargs = [\"serve\", \"--policy\", \"/home/me/.config/mcpsandbox/policy.toml\"]\nstartup_timeout_sec = 20\n"
	cp := filepath.Join(dir, "config.toml")
	os.WriteFile(cp, []byte(codex), 0o600)
	ct := Target{Client: client(t, "codex"), Scope: "user", Path: cp}
	c, err = ClientChange(ct, "sandbox", e, false)
	if err != nil || !c.Unchanged() {
		t.Fatalf("the Codex entry with startup_timeout_sec: %v\n%s", err, c.New)
	}
	if _, err := ClientChange(ct, "sandbox", other, false); !errors.Is(err, ErrExists) {
		t.Fatalf("a different Codex entry with extra keys: %v, want ErrExists", err)
	}
}
