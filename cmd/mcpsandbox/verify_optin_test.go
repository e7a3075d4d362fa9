package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	"github.com/mcpsandbox/mcpsandbox/internal/harness/e2bfake"
	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// verify on an e2b policy whose attacks wait for the user's opt-in (a release build without
// MCPSANDBOX_E2B_LIVE=1, or that variable without the key) reports the audit and the host, says
// the harness was not run and how to run it, and exits by the audit's and the host's result:
// trial32 F11 stopped at once, exit 1, with nothing but a test-build hint. The release path runs
// in a plain `go test` (no testhooks tag: no local E2B server); a release binary is checked in
// mutants' TestReleaseBinaryHasNoTestHooks.
func TestVerifyE2BAttacksWaitForOptIn(t *testing.T) {
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "session" // MS303, low: the audit's findings are shown, and do not fail
	file := writePolicy(t, p)
	cases := []struct {
		name, live, key, notRun string
		releaseOnly             bool
	}{
		{name: "release build, not live", live: "", key: "e2b_test_key", releaseOnly: true,
			notRun: "3. Harness not run: e2b's attacks run in a real E2B sandbox on your account; set MCPSANDBOX_E2B_LIVE=1 to run them (it uses sandbox time)\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.releaseOnly && testhooks.Build {
				t.Skip("SKIP: a test build attacks the local E2B server instead; run `go test ./cmd/mcpsandbox` without -tags testhooks for this case")
			}
			t.Setenv("MCPSANDBOX_E2B_LIVE", tc.live)
			t.Setenv("E2B_API_KEY", tc.key)
			// the host row asks E2B's API with the key (trial37 F7): the local E2B server's
			fake, err := e2bfake.New(e2bfake.Options{APIKey: tc.key})
			if err != nil {
				t.Fatal(err)
			}
			defer fake.Close()
			t.Setenv("E2B_API_URL", fake.URL())
			out, errOut, err := runCLI("verify", "--policy", file)
			if err != nil {
				t.Fatalf("verify: %v, want exit 0 (the audit and host are clean)\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
			}
			for _, want := range []string{"1. Policy audit\n", "MS303", "2. Host\n", "e2b api key", "ok  e2b api ", tc.notRun,
				"verify: PASS (the audit and the host; the harness was not run)\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("verify's output lacks %q:\n%s", want, out)
				}
			}
			if s := out + errOut; strings.Contains(s, "testhooks") || strings.Contains(s, "test build") {
				t.Errorf("verify sends an e2b user to a test build:\n%s", s)
			}
		})
	}
}

// verify on an e2b policy whose API key's variable is empty here fails, with a host row saying
// so and how to set it: serve stops at start without it, and verify said PASS (trial33 F6). A
// test build's harness, not live, runs against the local E2B server with a key of its own: there
// the row says so and does not fail. Red with mutant verify-e2b-key-blocks.
func TestVerifyE2BWithoutTheKeyFails(t *testing.T) {
	p := policy.Default(e2bsec.Name)
	file := writePolicy(t, p)
	t.Setenv("E2B_API_KEY", "")
	t.Setenv("MCPSANDBOX_E2B_LIVE", "1") // not the local server, in either build
	out, errOut, err := runCLI("verify", "--policy", file)
	if err == nil || !strings.Contains(out, "e2b api key") || !strings.Contains(out, "$E2B_API_KEY is empty or unset") ||
		!strings.Contains(out, "export E2B_API_KEY=") || !strings.Contains(out, "verify: FAIL") {
		t.Fatalf("verify without the key: %v, want FAIL naming the e2b api key row\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
}

// init's "next:" line and the wizard's offer to run verify say what verify will do on an e2b
// policy whose attacks wait for the user's opt-in: the audit and host checks, and how to opt in
// (trial32 F11: the offer promised "the attacks … a cloud sandbox", then verify stopped).
func TestInitSaysVerifyWaitsForTheE2BOptIn(t *testing.T) {
	t.Setenv("MCPSANDBOX_E2B_LIVE", "1")
	t.Setenv("E2B_API_KEY", "")
	const only = "(audit and host checks only: MCPSANDBOX_E2B_LIVE=1 but $E2B_API_KEY is empty; export your E2B key there to run e2b's attacks in a real E2B sandbox on your account (it uses sandbox time))"
	var out bytes.Buffer
	o := &InitOptions{IO: &Factory{Out: &out, ErrOut: &out}, Clients: []string{"cursor"}, PolicyOut: "/p/e2b.toml"}
	plan := &generate.Plan{Policy: policy.Default(e2bsec.Name)}
	if err := initNext(context.Background(), o, &out, false, &asker{f: o.IO}, plan); err != nil {
		t.Fatal(err)
	}
	if want := "next: mcpsandbox verify --policy /p/e2b.toml\n  " + only + "\n"; out.String() != want {
		t.Errorf("init's next line:\n%s\nwant:\n%s", out.String(), want)
	}
	if q, want := verifyQuestion(harnessOptIn(plan.Policy)), "Run mcpsandbox verify on it now "+only+"?"; q != want {
		t.Errorf("the wizard's offer:\n%s\nwant:\n%s", q, want)
	}
	t.Setenv("MCPSANDBOX_E2B_LIVE", "")
	if q := verifyQuestion(harnessOptIn(plan.Policy)); testhooks.Build != strings.Contains(q, "and the attacks") {
		t.Errorf("the wizard's offer, not live (test build %v): %s", testhooks.Build, q)
	}
	if q := verifyQuestion(harnessOptIn(policy.Default("docker"))); !strings.Contains(q, "and the attacks") {
		t.Errorf("the wizard's offer for a docker policy: %s", q)
	}
}
