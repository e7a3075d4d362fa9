package e2e

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
)

// devMachine is a developer's machine as the suite meets it: the MCP client CLIs installed (fakes
// that log every call), a real policy at $HOME/.config/mcpsandbox/policy.toml, ~/.claude.json
// and the other clients' configs, and XDG variables pointing into that HOME.
type devMachine struct {
	home, calls string
	env         []string
	before      map[string]string
}

func newDevMachine(t *testing.T) *devMachine {
	t.Helper()
	root := t.TempDir()
	d := &devMachine{home: filepath.Join(root, "home"), calls: filepath.Join(root, "client-calls.log")}
	bin := filepath.Join(root, "bin")
	for _, dir := range []string{bin, ".config/mcpsandbox", ".claude", ".codex", ".gemini", ".cursor", ".config/Code/User", "work"} {
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(d.home, dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range testenv.ClientCLIs {
		write(t, filepath.Join(bin, c), fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >>%s\necho '%s 1.0.0'\n", c, d.calls, c), 0o755)
	}
	policyPath := filepath.Join(d.home, ".config/mcpsandbox/policy.toml")
	write(t, policyPath, fmt.Sprintf("scheme = \"allowlist\"\nname = \"my-project\"\n\n[allowlist]\nworkspace = %q\n\n[[allowlist.commands]]\nname = \"wc\"\npath = \"/usr/bin/wc\"\n", filepath.Join(d.home, "work")), 0o644)
	write(t, filepath.Join(d.home, ".claude.json"), fmt.Sprintf(`{"mcpServers": {"sandbox": {"command": "/usr/local/bin/mcpsandbox", "args": ["serve", "--policy", %q]}}, "projects": {}}`, policyPath), 0o644)
	write(t, filepath.Join(d.home, ".codex/config.toml"), "[mcp_servers.sandbox]\ncommand = \"/usr/local/bin/mcpsandbox\"\nargs = [\"serve\"]\n", 0o644)
	write(t, filepath.Join(d.home, ".gemini/settings.json"), `{"mcpServers": {"sandbox": {"command": "/usr/local/bin/mcpsandbox", "args": ["serve"]}}}`, 0o644)
	write(t, filepath.Join(d.home, ".cursor/mcp.json"), `{"mcpServers": {}}`, 0o644)
	write(t, filepath.Join(d.home, ".config/Code/User/mcp.json"), `{"servers": {}}`, 0o644)
	d.env = append(os.Environ(), "HOME="+d.home, "PATH="+bin+string(filepath.ListSeparator)+os.Getenv("PATH"),
		"XDG_CONFIG_HOME="+filepath.Join(d.home, ".config"), "XDG_STATE_HOME="+filepath.Join(d.home, ".local/state"),
		"XDG_DATA_HOME="+filepath.Join(d.home, ".local/share"), "XDG_CACHE_HOME="+filepath.Join(d.home, ".cache"))
	// Go's caches stay the real ones (a developer's go env), so the re-run builds nothing anew.
	if out, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output(); err == nil {
		v := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(v) == 3 {
			d.env = append(d.env, "GOCACHE="+v[0], "GOMODCACHE="+v[1], "GOPATH="+v[2])
		}
	}
	d.before = d.snapshot(t)
	return d
}

// snapshot maps each path under HOME to its size and modification time (the go command's own
// telemetry under .config/go aside).
func (d *devMachine) snapshot(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(d.home, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(d.home, p)
		if rel == filepath.Join(".config", "go") {
			return filepath.SkipDir
		}
		if info, err := e.Info(); err == nil && !e.IsDir() {
			m[rel] = fmt.Sprintf("%d %s", info.Size(), info.ModTime().Format(time.RFC3339Nano))
		}
		return nil
	})
	return m
}

// untouched fails t when anything under HOME changed or a client CLI ran.
func (d *devMachine) untouched(t *testing.T) {
	t.Helper()
	after := d.snapshot(t)
	var changed []string
	for p, v := range after {
		if d.before[p] != v {
			changed = append(changed, "wrote ~/"+p)
		}
	}
	for p := range d.before {
		if _, ok := after[p]; !ok {
			changed = append(changed, "removed ~/"+p)
		}
	}
	if len(changed) > 0 {
		slices.Sort(changed)
		if len(changed) > 10 {
			changed = append(changed[:10], fmt.Sprintf("and %d more", len(changed)-10))
		}
		t.Errorf("the tests changed the developer's HOME:\n%s", strings.Join(changed, "\n"))
	}
	if b, err := os.ReadFile(d.calls); err == nil {
		t.Errorf("the tests ran the developer's client CLIs:\n%s", b)
	}
}

func (d *devMachine) run(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	var out bytes.Buffer
	cmd.Env, cmd.Stdout, cmd.Stderr = d.env, &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Errorf("%s on a developer's machine (client CLIs on PATH, a policy in HOME): %v\n%s", strings.Join(cmd.Args, " "), err, out.String())
		return
	}
	t.Logf("%s: passed in %s", strings.Join(cmd.Args, " "), time.Since(start).Round(time.Millisecond))
}

// The suite passes on a developer's own machine (issue 24): with claude, codex, gemini, cursor,
// code and windsurf on PATH and a real policy and client configs in HOME, the tests that used
// to see them (TestCLI read the real policy; the wizard tests detected the installed clients)
// pass, and none writes into that HOME or runs a client. The e2e tests re-run this test binary
// (against the binary TestMain built); cmd/mcpsandbox and generate are re-run with go test.
func TestSuitePassesOnADeveloperMachine(t *testing.T) {
	parallel(t)
	if testing.Short() {
		t.Skip("SKIP in -short: re-runs about 10 s of tests in a polluted HOME")
	}
	d := newDevMachine(t)

	self := exec.Command(os.Args[0], "-test.count=1", "-test.run", "^(TestInitWizardPTY|TestInitWizardHTTP|TestInitFlagsThenServeAnswers)$")
	d.env = append(d.env, "MCPSANDBOX_TEST_BINARY="+binPath)
	d.run(t, self)

	// -race, as make test builds them, so the go command finds both test binaries in its cache.
	d.run(t, exec.Command("go", "test", "-race", "-tags", "testhooks", "-count=1", "-run", "^(TestCLI|TestHermeticPathCoversDetection)$", "../cmd/mcpsandbox", "../internal/generate"))
	d.untouched(t)
}
