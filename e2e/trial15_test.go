package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A server npx starts that ends at once with network = false (npm's ENOTCACHED: the package is
// in no cache) gets wrap's hint with the registry's hosts and the policy to put them in, as init
// --wrap gives it; with the registry listed, or for a command no package runner starts, none.
// A new user's trial saw only "the wrapped server ended: see its messages above".
func TestWrapSaysWhatAFirstStartNeeds(t *testing.T) {
	bin := t.TempDir()
	os.Chmod(bin, 0o755)
	fake := "#!/bin/sh\necho 'npm error code ENOTCACHED' >&2\nexit 1\n"
	for _, name := range []string{"npx", "other-server"} {
		write(t, filepath.Join(bin, name), fake, 0o755)
	}
	run := func(r *wrapRig, cmd string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, binPath, "wrap", "--policy", r.policy, "--", cmd, "-y", "some-server")
		c.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
		pr, pw, _ := os.Pipe() // stdin stays open: the server's end, not the client's, ends wrap
		defer pw.Close()
		c.Stdin = pr
		var stderr bytes.Buffer
		c.Stderr = &stderr
		err := c.Run()
		pr.Close()
		if err == nil {
			t.Fatalf("wrap of a server that ended at once exited 0:\n%s", stderr.String())
		}
		return stderr.String()
	}
	hint := `needs network = ["registry.npmjs.org"] in `
	r := newWrapRig(t, "network = false")
	if got := run(r, "npx"); !strings.Contains(got, "the wrapped server ended") || !strings.Contains(got, hint+r.policy) {
		t.Errorf("npx with no network: stderr lacks %q:\n%s", hint+r.policy, got)
	}
	if got := run(r, "other-server"); !strings.Contains(got, "the wrapped server ended") || strings.Contains(got, hint) {
		t.Errorf("a command no package runner starts got the registry hint:\n%s", got)
	}
	if got := run(newWrapRig(t, `network = ["registry.npmjs.org"]`), "npx"); strings.Contains(got, hint) {
		t.Errorf("npx with the registry listed got the hint:\n%s", got)
	}
}

// In the wizard, a client config that already has a different server of the name, whose
// replacement is declined, asks for another name to add this one under, every answer kept,
// instead of ending init (exit 1, "pass --force … or --name NAME": flags the wizard never asked
// for, every answer lost) as a new user's trial saw. The other server stays as it was.
// Catches wizard-name-taken-exit.
func TestWizardAsksAnotherNameForATakenOne(t *testing.T) {
	e, cfg, _, w := declinedTakenName(t)
	w.step("under another name", "bad name"+enter)
	w.expect("not a valid server name")
	w.con.Send("\x15mine" + enter) // ^U clears the rejected answer
	w.step("Write them?", enter)
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v", err)
	}
	b, _ := os.ReadFile(cfg) // one line: the entry goes in compact (trial32 F7)
	if !strings.Contains(string(b), `"sandbox": {"command": "/opt/their/server", "args": ["--x"]}`) || !strings.Contains(string(b), `,"mine":{"command":`) {
		t.Fatalf("%s: their server kept and this one added as \"mine\"?\n%s", cfg, b)
	}
	if pb, err := os.ReadFile(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err != nil || !strings.Contains(string(pb), `name    = "mine"`) {
		t.Errorf("the policy's server name: %v\n%s", err, pb)
	}
}

// The same, with the other name left empty: init ends, nothing is written (their file byte for
// byte as it was, no policy), and the last words are the wizard's, not the flags' "pass --force
// … or --name NAME" a new user's trial saw there (trial25 #6).
func TestWizardTakenNameLeftEmptyWritesNothing(t *testing.T) {
	e, cfg, theirs, w := declinedTakenName(t)
	w.step("under another name", enter)
	w.expect("gave no other name, so nothing was written")
	if err := w.exit(); err == nil {
		t.Error("exit 0 though nothing was written")
	}
	if s := w.seen.String(); strings.Contains(s, "--force") || strings.Contains(s, "--name") {
		t.Errorf("the wizard's last words name flags it never asked for:\n%s", s)
	}
	if b, _ := os.ReadFile(cfg); string(b) != theirs {
		t.Errorf("%s changed:\n%s", cfg, b)
	}
	if _, err := os.Stat(filepath.Join(e.config, "mcpsandbox", "policy.toml")); err == nil {
		t.Error("the policy was written")
	}
}

// declinedTakenName runs the wizard to its question for another name: Cursor's config has
// another server named "sandbox" (theirs), and its replacement was declined.
func declinedTakenName(t *testing.T) (*initEnv, string, string, *wizardRun) {
	e := newInitEnv(t)
	cfg := filepath.Join(e.home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cfg), 0o755)
	theirs := `{"mcpServers": {"sandbox": {"command": "/opt/their/server", "args": ["--x"]}}}` + "\n"
	write(t, cfg, theirs, 0o644)
	w := startWizard(t, e)
	allowlistDefaultSteps(w)
	w.step("`serve --http` you start with this policy", enter)
	w.step("Configure which clients?", "\x1b[D") // none, then cursor alone
	w.con.Send("cursor")
	w.step("cursor", " "+enter)
	w.step("Write the policy to", enter)
	w.expect(`already has a different server named "sandbox" (it runs /opt/their/server --x; this one runs `) // what differs (trial32 F15b)
	w.step(`Replace it?`, "n"+enter)
	return e, cfg, theirs, w
}

// "No" to replacing a policy that is there (a hand-edited one that does not load, say) asks for
// another file, keeping every answer, instead of ending with flags' advice (trial32 F20); the
// kept file stays byte for byte.
func TestWizardKeptPolicyAsksAnotherFile(t *testing.T) {
	e := newInitEnv(t)
	pol := filepath.Join(e.config, "mcpsandbox", "policy.toml")
	os.MkdirAll(filepath.Dir(pol), 0o755)
	theirs := "version = 1\nscheme = \"allowlist\"\nbogus = 1\n"
	write(t, pol, theirs, 0o644)
	w := startWizard(t, e)
	allowlistDefaultSteps(w)
	w.step("`serve --http` you start with this policy", enter)
	w.step("Configure which clients?", "\x1b[D"+enter) // none
	w.step("Write the policy to", enter)
	w.step("exists. Replace it", "n"+enter)
	other := filepath.Join(e.config, "mcpsandbox", "second.toml")
	w.step("Write the new policy to", other+enter)
	w.step("Write them?", enter)
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v\n%s", err, w.seen.String())
	}
	if b, _ := os.ReadFile(pol); string(b) != theirs {
		t.Errorf("%s changed:\n%s", pol, b)
	}
	if b, err := os.ReadFile(other); err != nil || !strings.Contains(string(b), `scheme  = "allowlist"`) {
		t.Errorf("the new policy at %s: %v\n%s", other, err, b)
	}
}
