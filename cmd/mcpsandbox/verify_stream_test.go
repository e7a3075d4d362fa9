package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcpsandbox/mcpsandbox/internal/harness"
	"github.com/mcpsandbox/mcpsandbox/internal/scheme"
	"github.com/mcpsandbox/mcpsandbox/internal/testenv"
	"github.com/mcpsandbox/mcpsandbox/internal/verify"
	"github.com/mcpsandbox/mcpsandbox/policy"
)

// trial36 F5: with stdout a file or a pipe, verify wrote nothing until it ended (4½ minutes of
// silence for a docker policy). Section 1 is written before the host is examined, section 2
// before the harness starts. Red when the report is written at the end (mutant
// verify-sections-at-end).
func TestVerifyWritesEachSectionWhenKnown(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	var out, errb bytes.Buffer
	var atDoctor, atHarness string
	ran := false
	doctor, scenarios := verifyDoctor, verifyScenarios
	defer func() { verifyDoctor, verifyScenarios = doctor, scenarios }()
	verifyDoctor = func(ctx context.Context) []verify.Check {
		atDoctor = out.String()
		return doctor(ctx)
	}
	verifyScenarios = func(context.Context, io.Writer, *policy.Policy, *scheme.Scheme, []*harness.Scenario, int, time.Duration) (*harness.Report, error) {
		atHarness, ran = out.String(), true
		return &harness.Report{}, nil
	}
	root := NewCmdRoot(&Factory{In: strings.NewReader(""), Out: &out, ErrOut: &errb})
	root.SetArgs([]string{"verify", "--default"})
	root.ExecuteContext(context.Background())
	if !strings.Contains(atDoctor, "1. Policy audit") || strings.Contains(atDoctor, "2. Host") {
		t.Errorf("written when the host was examined:\n%s", atDoctor)
	}
	if !ran {
		t.Fatalf("the harness was not run; stdout:\n%s\nstderr:\n%s", out.String(), errb.String())
	}
	if !strings.Contains(atHarness, "2. Host") || strings.Contains(atHarness, "3. Harness") {
		t.Errorf("written when the harness started:\n%s", atHarness)
	}
	got := out.String()
	for i, s := range []string{"Policy built-in", "1. Policy audit", "2. Host", "3. Harness", "verify: "} {
		if strings.Count(got, s) != 1 {
			t.Errorf("section %d (%q) written %d times:\n%s", i, s, strings.Count(got, s), got)
		}
	}
}

// trial36 F5: off a terminal the harness's progress is a line every progressEvery scenarios,
// one at the end, and one after progressQuiet without any; on a terminal one line rewritten in
// place. Red without the lines (mutant verify-progress-terminal-only).
func TestScenarioProgressOffATerminal(t *testing.T) {
	every, quiet := progressEvery, progressQuiet
	defer func() { progressEvery, progressQuiet = every, quiet }()
	progressEvery, progressQuiet = 10, 150*time.Millisecond
	w := &testenv.LockedBuffer{}
	step, stop := scenarioProgress(w, 25, false)
	if step == nil {
		t.Fatal("no progress off a terminal")
	}
	for range 12 {
		step(harness.Result{})
	}
	time.Sleep(progressQuiet + progressQuiet/2) // a slow scenario
	for range 13 {
		step(harness.Result{})
	}
	stop()
	got := w.String()
	for _, want := range []string{"harness: 10/25 scenarios done", "harness: 12/25 scenarios done", "harness: 20/25 scenarios done", "harness: 25/25 scenarios done"} {
		if !strings.Contains(got, want+" (") {
			t.Errorf("no %q in:\n%s", want, got)
		}
	}
	if strings.Contains(got, "\r") {
		t.Errorf("a terminal's carriage return in a log:\n%q", got)
	}
	w = &testenv.LockedBuffer{}
	step, stop = scenarioProgress(w, 2, true)
	step(harness.Result{})
	step(harness.Result{})
	stop()
	if got := w.String(); got != "\r1/2 scenarios done\r2/2 scenarios done\r\033[K" {
		t.Errorf("on a terminal: %q", got)
	}
}
