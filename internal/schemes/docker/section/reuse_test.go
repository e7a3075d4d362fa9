package section

import (
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// A misspelt reuse is one problem, with a did-you-mean, not also one about the session keys it
// was meant to switch on (trial35 F16: reuse = "sessions" beside max_sessions got two).
func TestMisspeltReuseIsOneProblem(t *testing.T) {
	d := *Of(policy.Default(Name))
	d.Reuse, d.MaxSessions = "sessions", 2
	ps := d.Validate(false)
	if len(ps) != 1 || ps[0].Key != "docker.reuse" || !strings.Contains(ps[0].Msg, `"sessions" is not a reuse mode`) ||
		!strings.HasPrefix(ps[0].Fix, `did you mean "session"?`) {
		t.Errorf("want one problem with a did-you-mean, got %+v", ps)
	}
	d.Reuse = "forever"
	if ps := d.Validate(false); len(ps) != 1 || strings.Contains(ps[0].Fix, "did you mean") {
		t.Errorf("nothing near forever: %+v", ps)
	}
}
