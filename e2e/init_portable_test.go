package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
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

	t.Run("second-HOME", func(t *testing.T) {
		mate := newInitEnv(t)
		withPATH(t, mate, bin)
		portableTeammate(t, lead, mate, files, words[2:], filepath.Join(bin, "mcpsandbox"), claude, gemini, -1)
	})
	// a teammate who is another, unprivileged user: nobody (65534), its HOME, config directory
	// and clone its own, the binary root's, readable by all (as an installed one is)
	t.Run("non-root-user", func(t *testing.T) {
		if os.Geteuid() != 0 {
			testenv.Skip(t, "SKIPPED LOUDLY: a second user needs root to start its processes")
		}
		root, err := os.MkdirTemp("", "mcpsandbox-portable-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(root) })
		os.Chmod(root, 0o755)
		shared := filepath.Join(root, "bin")
		os.Mkdir(shared, 0o755)
		b, err := os.ReadFile(binPath)
		if err != nil || os.WriteFile(filepath.Join(shared, "mcpsandbox"), b, 0o755) != nil {
			t.Fatalf("copy the binary: %v", err)
		}
		mate := &initEnv{home: filepath.Join(root, "home"), config: filepath.Join(root, "home", ".config"), project: filepath.Join(root, "home", "proj")}
		for _, d := range []string{mate.home, mate.config, mate.project} {
			os.MkdirAll(d, 0o755)
			os.Chown(d, 65534, 65534)
		}
		mate.env = []string{"HOME=" + mate.home, "XDG_CONFIG_HOME=" + mate.config, "NO_COLOR=1", "USER=nobody", "LOGNAME=nobody",
			"PATH=" + shared + string(os.PathListSeparator) + os.Getenv("PATH")}
		portableTeammate(t, lead, mate, files, words[2:], filepath.Join(shared, "mcpsandbox"), claude, gemini, 65534)
	})
}

// portableTeammate is the teammate's part of TestPortableTeamInRealClients, run as uid (its own
// group; -1: this user): the committed files copied into their clone, the lead's printed init command, then
// each real client's `mcp list` in the clone.
func portableTeammate(t *testing.T, lead, mate *initEnv, files, initArgs []string, mcpsandbox, claude, gemini string, uid int) {
	t.Helper()
	var attr *syscall.SysProcAttr
	if uid >= 0 {
		attr = asUserAttr(uint32(uid), uint32(uid))
	}
	write := func(path string, b []byte, mode os.FileMode) {
		os.MkdirAll(filepath.Dir(path), 0o755)
		if err := os.WriteFile(path, b, mode); err != nil {
			t.Fatal(err)
		}
		if uid >= 0 {
			os.Chown(filepath.Dir(path), uid, uid)
			os.Chown(path, uid, uid)
		}
	}
	committed := map[string][]byte{}
	for _, f := range files {
		b, err := os.ReadFile(filepath.Join(lead.project, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), lead.home) || strings.Contains(string(b), lead.project) {
			t.Errorf("%s holds a path of the lead's machine:\n%s", f, b)
		}
		committed[f] = b
		write(filepath.Join(mate.project, f), b, 0o644)
	}
	run := func(name string, args ...string) (string, string, int) {
		cmd := exec.Command(name, args...)
		cmd.Env, cmd.Dir, cmd.SysProcAttr = mate.env, mate.project, attr
		return runCmdTimeout(t, cmd, 90*time.Second)
	}
	if out, stderr, code := run(mcpsandbox, append([]string{"init"}, initArgs...)...); code != 0 {
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
	write(filepath.Join(mate.home, ".gemini", "trustedFolders.json"), trust, 0o600)
	approved, _ := json.Marshal(map[string]any{"projects": map[string]any{mate.project: map[string]any{"enabledMcpjsonServers": []string{"sandbox"}, "hasTrustDialogAccepted": true}}})
	write(filepath.Join(mate.home, ".claude.json"), approved, 0o600)
	for name, cli := range map[string]string{"claude": claude, "gemini": gemini} {
		out, stderr, _ := run(cli, "mcp", "list")
		got := out + stderr
		t.Logf("%s mcp list, as the teammate in %s:\n%s", name, mate.project, got)
		if !strings.Contains(got, "sandbox") || !strings.Contains(got, "mcpsandbox serve --project") || !strings.Contains(got, "Connected") || strings.Contains(got, "Disconnected") {
			t.Errorf("%s mcp list in the teammate's clone does not show the committed entry connected:\n%s", name, got)
		}
	}
}
