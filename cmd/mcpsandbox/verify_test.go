package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	e2bsec "github.com/mcpsandbox/mcpsandbox/internal/schemes/e2b/section"

	"github.com/mcpsandbox/mcpsandbox/internal/schemes"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

type verifyJSON struct {
	Pass    bool
	Reasons []string
	Audit   []struct{ Rule, Message string }
}

func runVerifyJSON(t *testing.T, args ...string) (verifyJSON, error) {
	t.Helper()
	out, _, err := runCLI(append([]string{"verify", "--json", "--no-harness"}, args...)...)
	var v verifyJSON
	if jerr := json.Unmarshal([]byte(out), &v); jerr != nil {
		t.Fatalf("verify --json printed %q: %v (err %v)", out, jerr, err)
	}
	return v, err
}

// writePolicy writes p to a file of its own and gives its path.
func writePolicy(t *testing.T, p *policy.Policy) string {
	t.Helper()
	b, err := policy.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), p.Scheme+".toml")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// verify never says PASS for a policy serve cannot run, however clean its text.
func TestVerifyNeverPassesWhatServeCannotRun(t *testing.T) {
	sc, err := schemes.Lookup(e2bsec.Name)
	if err != nil {
		t.Fatal(err)
	}
	saved := *sc
	sc.Executor, sc.Unavailable = nil, "test: not compiled in"
	t.Cleanup(func() { *sc = saved })
	p := policy.Default(e2bsec.Name)
	e2bsec.Of(p).Reuse = "call"
	v, err := runVerifyJSON(t, "--policy", writePolicy(t, p))
	var ex *exitError
	if !errors.As(err, &ex) || ex.code != 1 || v.Pass {
		t.Fatalf("verify on a policy serve cannot run: err %v, pass %v", err, v.Pass)
	}
	if len(v.Reasons) == 0 || !strings.Contains(strings.Join(v.Reasons, " "), "e2b scheme cannot run") {
		t.Fatalf("the reason does not name the scheme: %q", v.Reasons)
	}
}

// verify --default judges the workspace serve --default really uses (a fresh temporary
// directory), not /tmp: with HOME under /tmp there is no "workspace contains HOME" finding,
// and the temporary workspace is gone afterwards.
func TestVerifyDefaultJudgesItsOwnWorkspace(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "mcpsandbox-workspace-*"))
	v, err := runVerifyJSON(t, "--default")
	if err != nil || !v.Pass {
		t.Fatalf("verify --default --no-harness: %v, reasons %q, audit %+v", err, v.Reasons, v.Audit)
	}
	for _, f := range v.Audit {
		if f.Rule == "MS105" {
			t.Fatalf("false positive: %s %s", f.Rule, f.Message)
		}
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "mcpsandbox-workspace-*"))
	if len(after) > len(before) {
		t.Fatalf("verify --default left its workspace behind: %v", after)
	}
}
