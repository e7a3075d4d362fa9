package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// A release build carries nothing test-only (internal/testhooks): no fake E2B server, no
// stand-in hook that re-opens loopback in the egress proxy, neither by name nor by code. The
// test build (the control) carries all of them, so their absence above is not a typo.
func TestReleaseBinaryHasNoTestHooks(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	build := func(name string, tags ...string) []byte {
		out := filepath.Join(dir, name)
		args := append(append([]string{"build"}, tags...), "-o", out, "./cmd/mcpsandbox")
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Env = root, append(os.Environ(), "CGO_ENABLED=0")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %v: %v\n%s", tags, err, b)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		nm, err := exec.Command("go", "tool", "nm", out).Output()
		if err != nil {
			t.Fatalf("go tool nm: %v", err)
		}
		return append(b, nm...)
	}
	markers := [][]byte{
		[]byte("MCPSANDBOX_EGRESS_STANDINS"), // the hook's variable (strings)
		[]byte("serve/egress.ParseStandIns"), // the code that re-opens the stand-ins (nm)
		[]byte("mcpsandbox/harness/e2bfake"), // the fake E2B server (nm)
	}
	release := build("release")
	for _, m := range markers {
		if bytes.Contains(release, m) {
			t.Errorf("the release binary contains %q: test-only code belongs behind the testhooks build tag", m)
		}
	}
	test := build("testhooks", "-tags", "testhooks")
	for _, m := range markers {
		if !bytes.Contains(test, m) {
			t.Errorf("control: the test build lacks %q, so its absence above proves nothing", m)
		}
	}
}
