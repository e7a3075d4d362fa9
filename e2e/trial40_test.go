package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A new user's trial (trial40 F1): "No" at "Write them?", where the preview shows a wrong
// answer, ended init with every answer lost. Now the preview offers to change the answers: each
// question comes back with its answer the default (Enter keeps it), the preview again, then the
// write; or to quit, writing nothing. Catches init-wizard-preview-no-back.
func TestWizardPreviewChangesAnswers(t *testing.T) {
	pol := func(e *initEnv) string { return filepath.Join(e.config, "mcpsandbox", "policy.toml") }
	t.Run("change", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e)
		w.step("What should init do?", enter) // write a policy
		allowlistSchemeSteps(w)
		w.step("Timeout per call", "20s"+enter) // the mistake, seen in the preview
		for _, q := range []string{"Output cap per stream", "Memory per call", "Processes per call"} {
			w.step(q, enter)
		}
		defaultPlaceSteps(w)
		w.expect("Write them?")
		w.expect("Change my answers (yours are the defaults)")
		w.con.Send("Change" + enter)
		w.step("Which sandbox scheme?", enter) // the same scheme: every answer kept
		w.step("Workspace", enter)
		w.step("Commands to allow", enter)
		w.step("More commands", enter)
		w.step("network access?", enter)
		w.expect("Timeout per call")
		w.step("(20s)", "45s"+enter) // the answer given is the default
		for _, q := range []string{"Output cap per stream", "Memory per call", "Processes per call"} {
			w.step(q, enter)
		}
		defaultPlaceSteps(w)
		w.step("Write them?", enter) // write them, the default
		w.step("on it now (audit", "n"+enter)
		w.expect("verify --policy")
		if err := w.exit(); err != nil {
			t.Fatalf("wizard exited: %v", err)
		}
		pb, err := os.ReadFile(pol(e))
		if err != nil || !strings.Contains(string(pb), `timeout          = "45s"`) {
			t.Fatalf("the changed answer did not land: %v\n%s", err, pb)
		}
	})
	t.Run("quit", func(t *testing.T) {
		e := newInitEnv(t)
		w := startWizard(t, e)
		allowlistDefaultSteps(w)
		defaultPlaceSteps(w)
		w.step("Write them?", "Quit"+enter)
		w.expect("nothing written")
		if w.exit() == nil {
			t.Error("exit 0 after Quit at the preview")
		}
		if _, err := os.Stat(pol(e)); err == nil {
			t.Error("the policy was written after Quit")
		}
	})
}

// A new user's trial (trial40 F2): in the docker wizard a "yes" to a writable workspace took the
// reuse question away without a word, and with it sessions (Python state across calls), the
// reason a data person picks docker; the flags say why (a session's container outlives its
// calls). Now the question comes, saying so: session mounts the workspace read-only, as the
// preview shows. Catches init-wizard-docker-sessions-silent.
func TestWizardDockerWritableOffersSessions(t *testing.T) {
	img := dockerTestImage(t)
	e := newInitEnv(t)
	ws := mkdir(t, e.home, "data", 0o755)
	w := startWizard(t, e)
	w.step("What should init do?", enter) // write a policy
	w.step("Which sandbox scheme?", down+enter)
	w.step("Image", img+enter)
	w.step("Host directory to mount", ws+enter)
	w.step("Mount it writable?", "y"+enter)
	w.step("network access?", enter)
	w.step("Containers to keep pre-started", enter)
	w.expect("needs a read-only workspace")
	w.step("session mounts it read-only", "session"+enter)
	w.step("Container runtime", enter)
	if !goesOn(w) {
		return // this build's serve cannot run docker: said so, nothing written
	}
	defaultPlaceSteps(w)
	w.expect("Write them?")
	screen := w.seen.String()
	pv := screen[strings.LastIndex(screen, "These files will change"):]
	if !strings.Contains(pv, ws+" at /workspace (read-only)") || !strings.Contains(pv, "one container per MCP session") {
		t.Errorf("sessions picked after a writable workspace: the preview does not show a read-only workspace and sessions:\n%s", pv)
	}
	w.con.Send("Quit" + enter)
	w.expect("nothing written")
	w.exit()
}

// A new user's trial (trial46 F4): the docker wizard creates a missing workspace when asked, and
// "Quit (nothing is written)" at the preview left it behind. Init now removes what its questions
// made (if still empty) whenever it ends with nothing written. Catches init-quit-keeps-made.
func TestWizardQuitRemovesTheWorkspaceItMade(t *testing.T) {
	img := dockerTestImage(t)
	e := newInitEnv(t)
	ws := filepath.Join(e.home, "new-data")
	w := startWizard(t, e)
	w.step("What should init do?", enter) // write a policy
	w.step("Which sandbox scheme?", down+enter)
	w.step("Image", img+enter)
	w.step("Host directory to mount", ws+enter)
	w.step("Mount it writable?", enter)
	w.step("network access?", enter)
	w.step("Containers to keep pre-started", enter)
	w.step("Container reuse", enter)
	w.step("Container runtime", enter)
	w.step("does not exist. Create it?", "y"+enter)
	w.expect("created the workspace " + ws)
	if !goesOn(w) {
		return // this build's serve cannot run docker: said so, nothing written
	}
	defaultPlaceSteps(w)
	w.expect("Write them?")
	w.con.Send("Quit" + enter)
	w.expect("removed the workspace " + ws)
	w.exit()
	if _, err := os.Stat(ws); err == nil {
		t.Errorf("Quit (nothing is written) left the workspace %s the wizard made", ws)
	}
}
