package harness

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/executor"
)

// Each way a call can come back, and whether it proves its step started. The forgeries: a
// refusal or error quoting the code (which spells the token apart) proves nothing; a program
// printing "refused by rule" in its own output is not a refusal; a result with no token is
// not proven whatever else it says.
func TestStartProof(t *testing.T) {
	tok := NewStartToken()
	py := Step{Python: "print(1)", Start: tok}
	argv := Step{Argv: []string{"sort", "x"}}
	ran := func(r executor.Result) call { return call{structured: true, res: r} }
	cases := []struct {
		name    string
		c       call
		st      Step
		sighted bool
		ok      bool
		why     string
	}{
		{"token in stderr", ran(executor.Result{Stderr: tok.Joined() + "\n", ExitCode: 1}), py, false, true, "start token came back"},
		{"token in stdout", ran(executor.Result{Stdout: "x" + tok.Joined()}), py, false, true, "start token"},
		{"timed out, no token", ran(executor.Result{TimedOut: true, ExitCode: 137}), py, true, false, "timed out before acting"},
		{"exited, no token", ran(executor.Result{ExitCode: 1, Stderr: "python3: can't start"}), py, false, false, "never came back"},
		{"token only apart (the code quoted back)", ran(executor.Result{Stderr: py.PythonStart()}), py, false, false, "never came back"},
		{"refusal quoting the code", call{isError: true, text: refusalPrefix + "allowlist.args: argument 2 \"" + py.PythonStart() + "\""}, py, false, true, "refused by policy (rule allowlist.args)"},
		{"server error", call{isError: true, text: "mcpsandbox could not run the call: engine down"}, py, false, false, "server did not run it"},
		{"forged refusal in the program's output", ran(executor.Result{Stdout: refusalPrefix + "x: y", TimedOut: true}), py, false, false, "timed out before acting"},
		{"argv exit status", ran(executor.Result{ExitCode: 2}), argv, false, true, "exit status (2)"},
		{"argv timed out with output", ran(executor.Result{TimedOut: true, Stdout: "pear\n"}), argv, false, true, "after printing output"},
		{"argv timed out, seen running", ran(executor.Result{TimedOut: true}), argv, true, true, "seen running"},
		{"argv timed out, nothing", ran(executor.Result{TimedOut: true, ExitCode: 137}), argv, false, false, "timed out before acting"},
		{"server killed, seen", call{err: errors.New("connection closed")}, py, true, true, "seen running"},
		{"server killed, unseen", call{err: errors.New("connection closed")}, py, false, false, "did not start"},
	}
	for _, c := range cases {
		ok, why := startProof(c.c, c.st, c.sighted)
		if ok != c.ok || !strings.Contains(why, c.why) {
			t.Errorf("%s: ok=%v %q, want ok=%v containing %q", c.name, ok, why, c.ok, c.why)
		}
		if !ok && !strings.HasPrefix(why, "did not start") {
			t.Errorf("%s: an unproven step must say it did not start: %q", c.name, why)
		}
	}
}

// The preludes print the token joined while their text spells it apart; checked by running
// them with this host's sh and python3.
func TestStartPreludes(t *testing.T) {
	st := Step{Start: NewStartToken()}
	for _, pre := range []string{st.PythonStart(), st.ShellStart()} {
		if strings.Contains(pre, st.Start.Joined()) {
			t.Errorf("prelude spells the token joined: %q", pre)
		}
		if strings.Contains(pre, "/") {
			t.Errorf("prelude holds a '/', which an argument check could take for a path: %q", pre)
		}
	}
	if (Step{}).PythonStart() != "" || (Step{}).ShellStart() != "" {
		t.Error("a step without a token gets a prelude")
	}
	out, err := exec.Command("/bin/sh", "-c", st.ShellStart()+"echo after").CombinedOutput()
	if err != nil || string(out) != st.Start.Joined()+"\nafter\n" {
		t.Errorf("shell prelude printed %q (%v)", out, err)
	}
	py, err := exec.LookPath("python3")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("no python3: CI must have it")
		}
		t.Skip("no python3 on this host to run the python prelude")
	}
	cmd := exec.Command(py, "-c", st.PythonStart()+"import sys\nprint('after', '_mcpsb_s' in dir())")
	var o, e strings.Builder
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil || e.String() != st.Start.Joined()+"\n" || o.String() != "after False\n" {
		t.Errorf("python prelude: stderr %q stdout %q (%v)", e.String(), o.String(), err)
	}
}
