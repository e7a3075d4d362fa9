package e2b

import (
	"errors"
	"strings"
	"testing"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// Where the harness attacks the e2b scheme, in both kinds of build (offlineBuilt: a test build
// links the local E2B server, a release build does not): a release build's user is asked to opt
// in to a live run, never sent to a test build (trial32 F11).
func TestReadyAsksAReleaseBuildToOptIn(t *testing.T) {
	cases := []struct {
		name                    string
		live, haveKey, offline  bool
		why, how, notInWhyOrHow string // why == "": ready
	}{
		{name: "release, not live", offline: false,
			why: "e2b's attacks run in a real E2B sandbox on your account", how: "set MCPSANDBOX_E2B_LIVE=1 to run them (it uses sandbox time)"},
		{name: "release, not live, a key set", haveKey: true,
			why: "e2b's attacks run in a real E2B sandbox on your account", how: "set MCPSANDBOX_E2B_LIVE=1 to run them (it uses sandbox time)"},
		{name: "release, live with the key", live: true, haveKey: true},
		{name: "release, live without the key", live: true,
			why: "MCPSANDBOX_E2B_LIVE=1 but $MY_KEY is empty", how: "export your E2B key there to run e2b's attacks in a real E2B sandbox on your account (it uses sandbox time)"},
		{name: "test build, offline", offline: true},
		{name: "test build, live with the key", live: true, haveKey: true, offline: true},
		{name: "test build, live without the key", live: true, offline: true,
			why: "MCPSANDBOX_E2B_LIVE=1 but $MY_KEY is empty", how: "export your E2B key there to run e2b's attacks in a real E2B sandbox on your account (it uses sandbox time)"},
	}
	for _, tc := range cases {
		err := ready(tc.live, tc.haveKey, "MY_KEY", tc.offline)
		var oi *harness.OptInError
		switch {
		case tc.why == "" && err != nil:
			t.Errorf("%s: %v, want ready", tc.name, err)
		case tc.why == "":
		case !errors.As(err, &oi):
			t.Errorf("%s: %v, want a *harness.OptInError", tc.name, err)
		case oi.Why != tc.why || oi.How != tc.how:
			t.Errorf("%s: why %q how %q,\nwant why %q how %q", tc.name, oi.Why, oi.How, tc.why, tc.how)
		case strings.Contains(oi.Why+oi.How, "test"):
			t.Errorf("%s: verify's part of the answer names a test build: %q", tc.name, oi.Why+"; "+oi.How)
		}
	}
}

// A live run is announced: it attacks the user's own E2B account and uses its sandbox time.
func TestNoticeOfALiveRun(t *testing.T) {
	p := policy.Default(e2bsec.Name)
	t.Setenv(LiveEnv, "")
	if s := (adapter{}).Notice(p); s != "" {
		t.Errorf("not live: %q", s)
	}
	t.Setenv(LiveEnv, "1")
	if s, want := (adapter{}).Notice(p), "MCPSANDBOX_E2B_LIVE=1: e2b's attacks run in real E2B sandboxes on your account (the key in $E2B_API_KEY), and use its sandbox time"; s != want {
		t.Errorf("live: %q, want %q", s, want)
	}
}
