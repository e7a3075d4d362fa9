package main

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
)

// A harness whose scenarios could not be judged (ERROR: a step that did not start in time on a
// loaded machine) fails verify as a breach does; the verdict now says they are no breach and how
// to run them again (trial46 F5). A run with none says nothing more. Red with mutant
// verify-errors-unexplained.
func TestVerifyErrorsSayHowToRunAgain(t *testing.T) {
	rep := &harness.Report{Results: []harness.Result{
		{ID: "symlink-planted", Outcome: harness.Error}, {ID: "fork-bomb-shell", Outcome: harness.Contained}, {ID: "read-via-diff", Outcome: harness.Error}}}
	got := rerunErrors(rep, &VerifyOptions{PolicyPath: "/home/me/my policy.toml"})
	for _, want := range []string{"2 scenario(s) could not be judged (ERROR is not a breach", "mcpsandbox harness --policy '/home/me/my policy.toml' -s symlink-planted -s read-via-diff"} {
		if !strings.Contains(got, want) {
			t.Errorf("verdict's addition %q lacks %q", got, want)
		}
	}
	if got := rerunErrors(&harness.Report{Results: []harness.Result{{ID: "x", Outcome: harness.Breach}}}, &VerifyOptions{Default: true}); got != "" {
		t.Errorf("a breach alone: %q", got)
	}
}
