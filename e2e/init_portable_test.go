package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// withPATH gives e's commands a PATH whose first directory holds mcpsandbox (the binary under
// test, by that name): the committed portable entries run it by name.
func withPATH(t *testing.T, e *initEnv, dir string) {
	t.Helper()
	e.env = slices.DeleteFunc(e.env, func(kv string) bool { return strings.HasPrefix(kv, "PATH=") })
	e.env = append(e.env, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// The team's path in the real clients (trial38 F1): a lead's init --portable writes .mcp.json and
// .gemini/settings.json holding no path of theirs; a teammate (another HOME and config
// directory) with a copy of those files runs the command the lead's init printed, which leaves
// them byte for byte; then Claude Code's and Gemini CLI's own `mcp list`, run in the teammate's
// clone, start the committed entry (`mcpsandbox serve --project`) and show it Connected, serving
// the teammate's own policy for that clone.
func TestPortableTeamInRealClients(t *testing.T) {
	claude, gemini := clientCLI(t, "claude"), clientCLI(t, "gemini")
	bin := t.TempDir()
	if err := os.Symlink(binPath, filepath.Join(bin, "mcpsandbox")); err != nil {
		t.Fatal(err)
	}
	lead := newInitEnv(t)
	withPATH(t, lead, bin)
	files := []string{".mcp.json", filepath.Join(".gemini", "settings.json")}
	out, stderr, code := lead.run(t, "", "--portable", "--scheme", "allowlist", "--allow", "wc,sort",
		"--client", "claude-code:project", "--client", "gemini:project", "--yes")
	if code != 0 {
		t.Fatalf("lead's init: exit %d\n%s\n%s", code, out, stderr)
	}
	_, teammate, _ := strings.Cut(out, "runs in their own clone:\n")
	teammate, _, _ = strings.Cut(strings.TrimSpace(teammate), "\n")
	words := strings.Fields(teammate)
	if len(words) < 3 || words[1] != "init" {
		t.Fatalf("no teammate's command in:\n%s", out)
	}

	mate := newInitEnv(t)
	withPATH(t, mate, bin)
	committed := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(lead.project, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), lead.home) || strings.Contains(string(b), lead.project) || strings.Contains(string(b), bin) {
			t.Errorf("%s holds a path of the lead's machine:\n%s", f, b)
		}
		committed[f] = b
		os.MkdirAll(filepath.Join(mate.project, filepath.Dir(f)), 0o755)
		os.WriteFile(filepath.Join(mate.project, f), b, 0o644)
	}
	if out, stderr, code := mate.run(t, "", words[2:]...); code != 0 {
		t.Fatalf("teammate's init: exit %d\n%s\n%s", code, out, stderr)
	}
	for f, b := range committed {
		if got, _ := os.ReadFile(filepath.Join(mate.project, f)); string(got) != string(b) {
			t.Errorf("the teammate's init rewrote %s:\n%s", f, got)
		}
	}
	// the user's own steps, which init names: Gemini CLI's folder trust, Claude Code's approval
	// of a project's .mcp.json servers
	trust, _ := json.Marshal(map[string]string{mate.project: "TRUST_FOLDER"})
	os.MkdirAll(filepath.Join(mate.home, ".gemini"), 0o700)
	os.WriteFile(filepath.Join(mate.home, ".gemini", "trustedFolders.json"), trust, 0o600)
	approved, _ := json.Marshal(map[string]any{"projects": map[string]any{mate.project: map[string]any{"enabledMcpjsonServers": []string{"sandbox"}, "hasTrustDialogAccepted": true}}})
	os.WriteFile(filepath.Join(mate.home, ".claude.json"), approved, 0o600)
	for name, cli := range map[string]string{"claude": claude, "gemini": gemini} {
		cmd := exec.Command(cli, "mcp", "list")
		cmd.Env, cmd.Dir = mate.env, mate.project
		out, stderr, _ := runCmdTimeout(t, cmd, 90*time.Second)
		got := out + stderr
		if !strings.Contains(got, "sandbox") || !strings.Contains(got, "mcpsandbox serve --project") || !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
			t.Errorf("%s mcp list in the teammate's clone does not show the committed entry connected:\n%s", name, got)
		}
	}
}
