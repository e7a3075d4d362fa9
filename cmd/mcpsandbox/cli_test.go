package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/policy"
	"github.com/spf13/cobra"
)

func runCLI(args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	root := NewCmdRoot(&Factory{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	root.SetArgs(args)
	err = root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func TestCLI(t *testing.T) {
	cases := []struct {
		args    []string
		wantErr string // "" = success
		wantOut string
	}{
		{[]string{"version"}, "", "mcpsandbox"},
		{[]string{"serve"}, "give --policy FILE", ""},
		{[]string{"serve", "--policy", "x.toml", "--default"}, "give --policy FILE", ""},
		{[]string{"serve", "--policy", "/nonexistent/p.toml"}, "mcpsandbox init", ""},
		{[]string{"init", "--scheme", "docker"}, "needs a terminal", ""},
		{[]string{"init", "--scheme", "allowlist", "--yes"}, "missing: --workspace DIR, --allow CMD,CMD", ""},
		{[]string{"init", "--scheme", "allowlist", "--yes", "--workspace", "/", "--allow", "wc"}, "cannot be /", ""},
		{[]string{"init", "--scheme", "allowlist", "--yes", "--workspace", "/tmp/x", "--allow", "wc", "--client", "emacs"}, "client \"emacs\" is unknown", ""},
		{[]string{"init", "--scheme", "wrap", "--yes", "--client", "cursor"}, "init does not write wrap policies from answers (it writes allowlist, docker, e2b); to put servers already in a client's config under it, run mcpsandbox init --wrap", ""},
		{[]string{"init", "--scheme", "nope", "--yes"}, "--scheme nope: unknown scheme: init writes allowlist, docker, e2b", ""},
		// a typo gets the nearest scheme init writes; wrap, which init does not write from answers, is not offered
		{[]string{"init", "--scheme", "alowlist", "--yes"}, "unknown scheme: init writes allowlist, docker, e2b (did you mean --scheme allowlist?)", ""},
		{[]string{"init", "--scheme", "dokcer", "--yes"}, "(did you mean --scheme docker?)", ""},
		// a wrap policy that is not there: how to make one (init writes none from answers)
		{[]string{"wrap", "--policy", "/nonexistent/w.toml", "--", "true"}, "wrap policy /nonexistent/w.toml: no such file or directory: write one (scheme = \"wrap\"; README \"Wrap another MCP server\" shows every key), or add the server to a client's config and run `mcpsandbox init --wrap NAME`", ""},
		// the server's flags without `--` before its command: where they go (trial35 F11)
		{[]string{"wrap", "--policy", "p.toml", "npx", "-y", "srv"}, "unknown shorthand flag: 'y' in -y; if it is the server's, put the server's command after `--`: mcpsandbox wrap --policy FILE -- COMMAND ARGS…", ""},
		{[]string{"wrap", "--policy", "p.toml", "npx", "--stdio"}, "put the server's command after `--`", ""},
		{[]string{"init", "--clinet", "cursor"}, "unknown flag: --clinet: did you mean --client? (see mcpsandbox init --help)", ""},
		{[]string{"serve", "--polcy", "p.toml"}, "did you mean --policy?", ""},
		// a value the flag's type does not parse, in words (not "strconv.ParseInt: parsing …")
		{[]string{"init", "--pids", "abc"}, `--pids "abc": give a whole number (see mcpsandbox init --help)`, ""},
		{[]string{"init", "-y=maybe"}, `--yes "maybe": give true or false`, ""},
		// --pids 0 is refused as -5 is, not taken for "unset" (the default, silently)
		{[]string{"init", "--scheme", "allowlist", "--yes", "--workspace", "/tmp/x", "--allow", "wc", "--pids", "0"}, "--pids 0: give at least 1", ""},
		{[]string{"verify"}, "give --policy FILE", ""},
		{[]string{"harness"}, "give --policy FILE", ""},
		{[]string{"explain", "--default", "--policy", "p.toml"}, "give --policy FILE", ""},
		{[]string{"harness", "--list"}, "", "fork-bomb-python"},
		{[]string{"harness", "--default", "--scenario", "no-such-scenario"}, "unknown", ""},
		{[]string{"harness", "--default", "--category", "nope"}, "category \"nope\" is unknown", ""},
		{[]string{"harness", "--default", "--scheme", "docker"}, "the docker scheme has no built-in policy", ""},
		{[]string{"verify", "--policy", "/nonexistent/p.toml"}, "mcpsandbox init", ""},
		{[]string{"audit", "verify", "/nonexistent/audit.jsonl"}, "open audit log", ""},
		{[]string{"serve", "--help"}, "", "--check"},
	}
	for _, c := range cases {
		out, _, err := runCLI(c.args...)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%v: %v", c.args, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%v: err = %v, want it to mention %q", c.args, err, c.wantErr)
		case !strings.Contains(out, c.wantOut):
			t.Errorf("%v: stdout %q lacks %q", c.args, out, c.wantOut)
		}
	}
}

// serve's flags reach the run function as given (runF injection, no server started).
func TestServeOptions(t *testing.T) {
	var got *ServeOptions
	cmd := NewCmdServe(&Factory{}, func(_ context.Context, o *ServeOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"--default", "--workspace", "/w", "--check", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !got.Default || got.Workspace != "/w" || !got.Check || !got.JSON {
		t.Fatalf("options = %+v", got)
	}
}

// harness's and verify's flags reach their run functions as given.
func TestHarnessAndVerifyOptions(t *testing.T) {
	var h *HarnessOptions
	cmd := NewCmdHarness(&Factory{}, func(_ context.Context, o *HarnessOptions) error { h = o; return nil })
	cmd.SetArgs([]string{"--policy", "p.toml", "-s", "a,b", "-c", "network", "--json", "--junit", "j.xml", "--max-timeout", "3s", "--parallel", "2"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if h.PolicyPath != "p.toml" || len(h.Scenarios) != 2 || h.Categories[0] != "network" || !h.JSON || h.JUnit != "j.xml" || h.MaxTimeout.Seconds() != 3 || h.Parallel != 2 {
		t.Fatalf("harness options = %+v", h)
	}
	var v *VerifyOptions
	cmd = NewCmdVerify(&Factory{}, func(_ context.Context, o *VerifyOptions) error { v = o; return nil })
	cmd.SetArgs([]string{"--default", "--no-harness", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if !v.Default || !v.NoHarness || !v.JSON {
		t.Fatalf("verify options = %+v", v)
	}
}

// Colour only on a terminal, and never with NO_COLOR set.
func TestColorOnlyOnATerminal(t *testing.T) {
	ptm, pts, err := pty.Open()
	if err != nil {
		t.Skip("no pseudo-terminal here:", err)
	}
	defer ptm.Close()
	defer pts.Close()
	t.Setenv("NO_COLOR", "")
	os.Unsetenv("NO_COLOR")
	if !colorOK(pts) {
		t.Error("no colour on a terminal")
	}
	if colorOK(&bytes.Buffer{}) {
		t.Error("colour into a buffer")
	}
	t.Setenv("NO_COLOR", "1")
	if colorOK(pts) {
		t.Error("colour despite NO_COLOR")
	}
}

// verify and explain without --policy use the policy init writes by default, when there is one,
// and say so; without one they ask for --policy.
func TestVerifyAndExplainUseInitsPolicy(t *testing.T) {
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	p := filepath.Join(cfg, "mcpsandbox", "policy.toml")
	for _, name := range []string{"verify", "explain"} {
		var got string
		run := func(path string) { got = path }
		var errb bytes.Buffer
		f := &Factory{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &errb}
		var cmd *cobra.Command
		if name == "verify" {
			cmd = NewCmdVerify(f, func(_ context.Context, o *VerifyOptions) error { run(o.PolicyPath); return nil })
		} else {
			cmd = NewCmdExplain(f, func(_ context.Context, o *ExplainOptions) error { run(o.PolicyPath); return nil })
		}
		cmd.SetArgs(nil)
		if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "give --policy FILE") {
			t.Errorf("%s with no policy anywhere: %v", name, err)
		}
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("version = 1\n"), 0o600)
		if err := cmd.Execute(); err != nil || got != p || !strings.Contains(errb.String(), "using "+p) {
			t.Errorf("%s with init's policy: %v, ran on %q, said %q", name, err, got, errb.String())
		}
		os.Remove(p)
	}
}

// serve refuses a workspace holding its audit log (here the default one, under
// $XDG_STATE_HOME, with the workspace above it), before it answers anything: a call could
// erase or forge the record of every call. The same workspace without it serves.
// serve refuses an audit log inside allowlist.read_paths: commands run under serve's own uid
// when serve is not root, so they could read every call's record.
func TestServeRefusesItsAuditLogInReadPaths(t *testing.T) {
	ws, state := t.TempDir(), t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	f := filepath.Join(t.TempDir(), "p.toml")
	wc, err := generate.Pin("wc")
	if err != nil {
		t.Skipf("no wc to pin: %v", err)
	}
	os.WriteFile(f, []byte(fmt.Sprintf("version = 1\nscheme = \"allowlist\"\n[allowlist]\nworkspace = %q\nread_paths = [%q]\n[[allowlist.commands]]\nname = \"wc\"\npath = %q\nsha256 = %q\n", ws, state, wc.Path, wc.SHA256)), 0o600)
	_, _, err = runCLI("serve", "--policy", f, "--check")
	if err == nil || !strings.Contains(err.Error(), "the audit log") || !strings.Contains(err.Error(), "allowlist.read_paths[0]") {
		t.Fatalf("serve with its audit log in read_paths: %v", err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if _, _, err := runCLI("serve", "--policy", f, "--check"); err != nil {
		t.Fatalf("serve with its audit log elsewhere: %v", err)
	}
}

func TestServeRefusesItsAuditLogInTheWorkspace(t *testing.T) {
	ws := t.TempDir()
	t.Setenv("XDG_STATE_HOME", filepath.Join(ws, ".local", "state"))
	_, _, err := runCLI("serve", "--default", "--workspace", ws, "--check")
	if err == nil || !strings.Contains(err.Error(), "the audit log") || !strings.Contains(err.Error(), "inside the workspace") {
		t.Fatalf("serve with its audit log in the workspace: %v", err)
	}
	t.Setenv("XDG_STATE_HOME", t.TempDir())
	if _, _, err := runCLI("serve", "--default", "--workspace", ws, "--check"); err != nil {
		t.Fatalf("serve with its audit log elsewhere: %v", err)
	}
}

// --project naming no directory is refused before anything is written: init used to make it (as
// root, /nonexistent/proj/.vscode/mcp.json) and key Claude Code's local scope by it, where no
// client would read either (a new user's trial). Catches init-project-missing.
func TestInitRefusesAMissingProject(t *testing.T) {
	root := t.TempDir()
	t.Setenv("HOME", filepath.Join(root, "home"))
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(root, "config"))
	missing := filepath.Join(root, "no", "proj")
	file := filepath.Join(root, "file")
	os.WriteFile(file, nil, 0o600)
	for _, c := range []struct{ project, why string }{{missing, "no such directory"}, {file, "not a directory"}} {
		for _, args := range [][]string{
			{"init", "--scheme", "allowlist", "--allow", "wc", "--workspace", filepath.Join(root, "ws"), "--client", "vscode", "--yes", "--project", c.project},
			{"init", "--wrap", "all", "--project", c.project},
		} {
			_, _, err := runCLI(args...)
			if err == nil || !strings.Contains(err.Error(), "--project "+c.project+": "+c.why) {
				t.Errorf("%v: %v", args, err)
			}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "no")); err == nil {
		t.Errorf("init made the missing project %s", missing)
	}
	if _, err := os.Stat(filepath.Join(root, "config", "mcpsandbox")); err == nil {
		t.Errorf("init wrote its policy for a missing project")
	}
}

// A limit init's own flag set out of bounds is named by that flag, not only by the policy key
// of a file the user has not seen yet.
func TestInitNamesTheFlagOfAnInvalidLimit(t *testing.T) {
	initHome(t)
	_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--timeout", "20m", "--print", "--yes")
	if err == nil || !strings.Contains(err.Error(), "--timeout (limits.timeout)") {
		t.Errorf("init --timeout 20m: %v, want the flag named", err)
	}
}

// The refusal to replace a policy names the init --policy command to paste with this init's
// flags that go with it: without --print it would edit the configs this init only printed,
// without --project write another directory's, without --command run another binary (trial32 F1).
func TestPolicyRefusalCarriesThisInitsFlags(t *testing.T) {
	home := initHome(t)
	proj := t.TempDir()
	ws := t.TempDir()
	if _, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", ws, "--allow", "wc", "--print", "--yes"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		extra []string
		want  string
	}{
		{[]string{"--client", "claude-code:project", "--project", proj, "--print"}, " --client claude-code:project --project " + proj + " --print --yes"},
		{[]string{"--client", "cursor", "--command", "/bin/true"}, " --client cursor --command " + policy.RealPath("/bin/true") + " --yes"},
		{[]string{"--print"}, "to print the entry of that policy as it is: mcpsandbox init --policy " + filepath.Join(home, ".config", "mcpsandbox", "policy.toml") + " --print --yes"},
	} {
		args := append([]string{"init", "--scheme", "allowlist", "--workspace", ws, "--allow", "sort", "--yes"}, c.extra...)
		_, _, err := runCLI(args...)
		if err == nil || !strings.Contains(err.Error(), "already exists") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v\nwant the advice to end %q", c.extra, err, c.want)
		}
	}
}

// A policy written into the workspace (where calls write) is refused before anything is written,
// with serve's own rule and its fix, not at the entry's trial after init made the workspace the
// sandbox's (trial32 F6).
func TestInitRefusesThePolicyInsideTheWorkspace(t *testing.T) {
	initHome(t)
	ws := filepath.Join(t.TempDir(), "ws")
	_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", ws, "--allow", "wc", "--policy-out", filepath.Join(ws, "p.toml"), "--print", "--yes")
	if err == nil || !strings.Contains(err.Error(), "lies inside the workspace") || !strings.Contains(err.Error(), "--policy-out") {
		t.Fatalf("want serve's own-files refusal naming --policy-out: %v", err)
	}
	if _, err := os.Stat(ws); err == nil {
		t.Errorf("the workspace %s was made for an init that was refused", ws)
	}
}

// init naming clients and no scheme, while the policy init writes by default is there, names the
// init --policy command that gives them that policy (trial32 F28).
func TestInitWithoutSchemeNamesThePolicyThere(t *testing.T) {
	home := initHome(t)
	_, _, err := runCLI("init", "--client", "cursor", "--yes")
	if err == nil || strings.Contains(err.Error(), "--policy") {
		t.Fatalf("no policy there: %v", err)
	}
	if _, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--print", "--yes"); err != nil {
		t.Fatal(err)
	}
	_, _, err = runCLI("init", "--client", "cursor", "--yes")
	want := "mcpsandbox init --policy " + filepath.Join(home, ".config", "mcpsandbox", "policy.toml") + " --client cursor --yes"
	if err == nil || !strings.Contains(err.Error(), "missing: --scheme") || !strings.Contains(err.Error(), want) {
		t.Errorf("with the policy there: %v\nwant %q", err, want)
	}
}

// init under sudo: with the user's HOME kept it is refused (it would write their configs with
// entries it checks as root); with root's HOME it says it configures root's clients (trial32 F19).
func TestInitUnderSudo(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("init under sudo is root's: this test runs as root (as CI does)")
	}
	var w bytes.Buffer
	them, err := user.Lookup("nobody")
	if err != nil {
		t.Skipf("no account to be sudo's user: %v", err)
	}
	t.Setenv("HOME", them.HomeDir)
	if err := underSudo(&w, "nobody"); err == nil || !strings.Contains(err.Error(), "run it as nobody, without sudo") {
		t.Errorf("nobody's HOME kept: %v", err)
	}
	u, err := user.Current()
	if err != nil {
		t.Skip(err)
	}
	t.Setenv("HOME", u.HomeDir)
	if err := underSudo(&w, "nobody"); err != nil || !strings.Contains(w.String(), "it configures root's clients") {
		t.Errorf("root's HOME: %v %q", err, w.String())
	}
	w.Reset()
	t.Setenv("HOME", t.TempDir()) // a test's own HOME under `sudo make test`: nothing said
	for _, su := range []string{"", "nobody"} {
		if err := underSudo(&w, su); err != nil || w.Len() > 0 {
			t.Errorf("SUDO_USER=%q, HOME neither's: %v %q", su, err, w.String())
		}
	}
}

// init as root with a HOME another user owns and no SUDO_USER (su -m, a root shell with HOME
// exported) is refused: the configs it wrote there were root's 0600 files, which that user's
// clients could no longer read or change (trial33 F11). Red with mutant init-root-in-anothers-home.
func TestInitRootInAnothersHome(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root's init: this test runs as root (as CI does)")
	}
	home := t.TempDir()
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("SUDO_USER", "")
	_, _, err := runCLI("init", "--scheme", "allowlist", "--workspace", t.TempDir(), "--allow", "wc", "--client", "cursor", "--yes")
	if err == nil || !strings.Contains(err.Error(), "uid 65534") || !strings.Contains(err.Error(), "init needs no root") {
		t.Fatalf("root's init in uid 65534's HOME: %v, want refused naming the owner", err)
	}
	if ents, _ := os.ReadDir(home); len(ents) > 0 {
		t.Errorf("the refused init left %v in that HOME", ents)
	}
}

// initHome is a fresh HOME for init, its XDG config and state directories under it.
func initHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	return home
}
