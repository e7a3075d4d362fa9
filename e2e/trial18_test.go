package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new user's trial (round trial18 #3): the wizard, docker scheme, a writable workspace root
// owns; "Write them?" yes; the trial call refuses the workspace (containers run as nobody
// there) and init ended, every answer lost. Now the wizard keeps them and offers to try again:
// a retry before the fix fails the same way and nothing is written; after the chown (as the
// hint says, done in another terminal) the same answers are written. Catches wizard-write-exit
// and init-wizard-retry-says-run-again.
func TestWizardKeepsAnswersWhenTheTrialCallFails(t *testing.T) {
	img := dockerTestImage(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the workspace must be root's for the containers (nobody) to be refused it")
	}
	e := newInitEnv(t)
	ws := mkdir(t, e.home, "results", 0o755) // root's
	cfg := filepath.Join(e.home, ".cursor", "mcp.json")
	pol := filepath.Join(e.config, "mcpsandbox", "policy.toml")
	w := startWizard(t, e)
	w.step("What should init do?", enter) // write a policy
	w.step("Which sandbox scheme?", down+enter)
	w.step("Image", img+enter)
	w.step("Host directory to mount", ws+enter)
	w.step("Mount it writable?", "y"+enter)
	w.step("network access?", enter)
	w.step("Containers to keep pre-started", "2"+enter)
	w.step("needs a read-only workspace", enter) // call: the workspace stays writable (trial40 F2)
	w.step("Container runtime", enter)
	if !goesOn(w) {
		return // this build's serve cannot run docker: said so, nothing written
	}
	w.step("`serve --http` you start with this policy", enter) // stdio
	w.step("Configure which clients?", "cursor")
	w.step("cursor", " "+enter)
	w.step("Write the policy to", enter)
	w.step("Write them?", enter)
	w.expect("could not create a file in it")
	// the way on is the menu's Try again, not a new init (trial40 F10)
	if got := w.expect("then choose Try again below", "then run init again"); got != "then choose Try again below" {
		t.Errorf("the hint says to run init again above the menu's Try again:\n%s", w.seen.String())
	}
	w.expect("your answers are kept")
	w.step("What now?", enter) // try again, unfixed: refused again, the menu again
	w.expect("could not create a file in it")
	w.expect("What now?")
	for _, f := range []string{pol, cfg} {
		if _, err := os.Stat(f); err == nil {
			t.Errorf("%s was written although the trial call failed", f)
		}
	}
	if err := os.Chown(ws, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	w.con.Send(enter) // try again
	w.step("on it now (audit", "n"+enter)
	w.expect("verify --policy")
	if err := w.exit(); err != nil {
		t.Fatalf("wizard exited: %v", err)
	}
	pb, err := os.ReadFile(pol)
	if err != nil || !strings.Contains(string(pb), `pool       = 2`) || !strings.Contains(string(pb), ws) {
		t.Errorf("the answers given before the failed trial call: %v\n%s", err, pb)
	}
	if cb, err := os.ReadFile(cfg); err != nil || !strings.Contains(string(cb), `"sandbox"`) {
		t.Errorf("%s: %v\n%s", cfg, err, cb)
	}
}
