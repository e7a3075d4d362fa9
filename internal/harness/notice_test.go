package harness

import (
	"context"
	"errors"
	"testing"

	alsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/allowlist/section"

	"github.com/mcpsandbox/mcpsandbox/policy"
)

// noticing is an adapter whose attacks cost the user something (the e2b adapter live), or that
// waits for their opt-in (notReady).
type noticing struct {
	noSessions
	notReady error
}

func (n noticing) Ready(*policy.Policy) error { return n.notReady }
func (noticing) Notice(*policy.Policy) string { return "it costs" }

// Run says an adapter's notice once, before any scenario, and only when it will run them: an
// opt-in it waits for comes back as the *OptInError, with no notice and no scenario run.
func TestRunSaysTheNoticeBeforeTheScenarios(t *testing.T) {
	var said []string
	o := Options{Binary: "/nonexistent/mcpsandbox", Policy: policy.Default(alsec.Name), Adapter: noticing{},
		Notice: func(s string) { said = append(said, s) }}
	if _, err := Run(context.Background(), nil, o); err != nil || len(said) != 1 || said[0] != "it costs" {
		t.Errorf("ready: %v, said %q", err, said)
	}
	said = nil
	o.Adapter = noticing{notReady: &OptInError{Why: "w", How: "h", Else: "e"}}
	_, err := Run(context.Background(), nil, o)
	var oi *OptInError
	if !errors.As(err, &oi) || err.Error() != "w; h; e" || len(said) != 0 {
		t.Errorf("waiting for the opt-in: %v, said %q", err, said)
	}
}
