package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Dir(wd)
}

// A mutant nothing catches turns the run red; a catcher that matches no test is an error, not
// a catch.
func TestUncaughtMutantFailsTheRun(t *testing.T) {
	root := repoRoot(t)
	rep, err := Run(context.Background(), Options{Repo: root, Table: "testdata/uncaught.toml", Jobs: 2, SkipSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Survived, []string{"noop-uncaught", "noop-no-test", "noop-harness"}) {
		t.Fatalf("survivors = %v, want every no-op mutant", rep.Survived)
	}
	if oc := rep.Results[2].Outcomes[0]; oc.Caught || !oc.Control || oc.Error != "" || !strings.HasPrefix(oc.Catcher, "harness ") {
		t.Errorf("no-op mutant claimed by a harness scenario: %+v", oc)
	}
	if oc := rep.Results[0].Outcomes[0]; oc.Caught || !oc.Control || oc.Error != "" {
		t.Errorf("no-op mutant: %+v", oc)
	}
	if oc := rep.Results[1].Outcomes[0]; oc.Caught || !strings.Contains(oc.Error, "matched no test") {
		t.Errorf("catcher without a test: %+v", oc)
	}
	md := rep.Markdown()
	if !strings.Contains(md, "**SURVIVED**") || !strings.Contains(md, "**Survivors:** noop-uncaught, noop-no-test, noop-harness") {
		t.Errorf("report does not show the survivors:\n%s", md)
	}
}

// The table and the switches in the source agree: every mutated("x") has an entry (so it is
// judged) and every entry names a switch that exists (so it changes something).
func TestTableMatchesSource(t *testing.T) {
	root := repoRoot(t)
	tab, err := LoadTable(filepath.Join(root, "mutants", "mutants.toml"))
	if err != nil {
		t.Fatal(err)
	}
	sw, err := Switches(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sw) < 20 {
		t.Fatalf("only %d switches found in the source: %v", len(sw), sw)
	}
	if err := CheckSync(tab, sw); err != nil {
		t.Fatal(err)
	}
	// Control: a switch without an entry is reported.
	sw["made-up-switch"] = []string{"x.go"}
	if err := CheckSync(tab, sw); err == nil || !strings.Contains(err.Error(), "made-up-switch") {
		t.Fatalf("an unlisted switch went unnoticed: %v", err)
	}
}

// A release build carries no mutant switch: neither the variable's name nor the marker, nor
// the symbols of the switch; the mutant build (the control) carries all of them.
func TestReleaseBinaryHasNoMutants(t *testing.T) {
	root := repoRoot(t)
	dir := t.TempDir()
	build := func(name string, tags ...string) []byte {
		out := filepath.Join(dir, name)
		args := append([]string{"build"}, tags...)
		cmd := exec.Command("go", append(args, "-o", out, "./cmd/mcpsandbox")...)
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
	markers := [][]byte{[]byte("MCPSANDBOX_MUTANT"), []byte("mcpsandbox-mutant-build"), []byte("internal/mutant.set")}
	release := build("release")
	for _, m := range markers {
		if bytes.Contains(release, m) {
			t.Errorf("the release binary contains %q", m)
		}
	}
	mutant := build("mutant", "-tags", "mutant")
	for _, m := range markers {
		if !bytes.Contains(mutant, m) {
			t.Errorf("control: the mutant binary lacks %q, so its absence above proves nothing", m)
		}
	}
}
