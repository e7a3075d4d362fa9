package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/generate"
	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// init --print --verify: stdout is the printed entry alone, as README promises for
// `init … --print > servers.json`; verify's report goes to stderr (trial33 F12: it followed the
// JSON on stdout, and the file was no longer JSON). An e2b policy waiting for the opt-in, its key
// unset, keeps verify to the audit and the host checks, quickly (and fails it: the e2b api key
// row, trial33 F6).
func TestInitPrintVerifyKeepsStdoutForTheEntry(t *testing.T) {
	t.Setenv("MCPSANDBOX_E2B_LIVE", "1")
	t.Setenv("E2B_API_KEY", "")
	file := writePolicy(t, policy.Default(e2bsec.Name))
	var out, errOut bytes.Buffer
	o := &InitOptions{IO: &Factory{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, Clients: []string{"cursor"},
		PolicyOut: file, Print: true, Verify: true}
	plan := &generate.Plan{Policy: policy.Default(e2bsec.Name)}
	_ = initNext(context.Background(), o, &errOut, false, &asker{f: o.IO}, plan) // verify's verdict: FAIL, no key

	if out.Len() != 0 {
		t.Errorf("init --print --verify wrote to stdout besides the entry:\n%s", out.String())
	}
	for _, want := range []string{"1. Policy audit\n", "e2b api key", "verify: FAIL"} {
		if !strings.Contains(errOut.String(), want) {
			t.Errorf("verify's report is not on stderr (lacks %q):\n%s", want, errOut.String())
		}
	}
}
