package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A relative XDG_STATE_HOME or XDG_CONFIG_HOME is ignored, as the XDG specification says: init
// run in a project's git work tree wrote the backup of its .vscode/mcp.json (env secrets and all)
// to ./state, its policy to ./cfg/mcpsandbox and Claude Desktop's config to ./cfg/Claude, all
// inside the work tree, where a `git add -A` publishes them (atk33 F6). Catches xdg-absolute-only.
func TestInitIgnoresRelativeXDGDirs(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	home := initHome(t)
	t.Setenv("XDG_STATE_HOME", "state")
	t.Setenv("XDG_CONFIG_HOME", "cfg")
	proj := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", proj).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	os.MkdirAll(filepath.Join(proj, ".vscode"), 0o755)
	old := `{"servers": {"db": {"command": "x", "env": {"DB_PASSWORD": "hunter2"}}}}`
	if err := os.WriteFile(filepath.Join(proj, ".vscode", "mcp.json"), []byte(old), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(proj)
	ws := t.TempDir()
	if _, stderr, err := runCLI("init", "--scheme", "allowlist", "--allow", "cat", "--workspace", ws, "--client", "vscode", "--client", "claude-desktop", "--yes"); err != nil {
		t.Fatalf("init: %v\n%s", err, stderr)
	}
	var stray []string
	filepath.WalkDir(proj, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(proj, p)
		switch {
		case err != nil || rel == ".":
		case rel == ".git":
			return filepath.SkipDir
		case rel != ".vscode" && rel != filepath.Join(".vscode", "mcp.json"):
			stray = append(stray, rel)
		}
		return nil
	})
	if len(stray) > 0 {
		t.Errorf("init wrote into the project's work tree: %s", strings.Join(stray, ", "))
	}
	for _, want := range []string{
		filepath.Join(home, ".config", "mcpsandbox", "policy.toml"),
		filepath.Join(home, ".config", "Claude", "claude_desktop_config.json"),
		filepath.Join(home, ".local", "state", "mcpsandbox", "backups"),
	} {
		if _, err := os.Stat(want); err != nil {
			t.Errorf("want the default place: %v", err)
		}
	}
}
