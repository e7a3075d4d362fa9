package harness

import (
	"bytes"
	"encoding/xml"
	"regexp"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/testhooks"
)

func sampleReport() *Report {
	rep := &Report{Scheme: "allowlist", ElapsedMS: 1500, Results: []Result{
		{ID: "a", Title: "A", Category: "network", Outcome: Contained, Findings: []Finding{{Detector: "tcp", Detail: "0 connections"}}},
		{ID: "b", Title: "B", Category: "network", Outcome: Breach, Findings: []Finding{{Detector: "udp", Breach: true, Detail: "5 datagrams"}}},
		{ID: "c", Title: "C", Category: "resource", Outcome: Error, Reason: "server did not start"},
		{ID: "d", Title: "D", Category: "hijack", Outcome: NotApplicable, Reason: "needs python"},
	}}
	rep.Counts = Counts{Contained: 1, Breached: 1, Errors: 1, NotApplicable: 1}
	return rep
}

func TestWriteTable(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, sampleReport(), TableOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"1 contained, 1 breached, 1 errors, 1 n/a", "udp!", "5 datagrams", "server did not start", "(1 scenarios not applicable to this policy are not listed"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "needs python") {
		t.Errorf("an N/A row without -v:\n%s", out)
	}
	b.Reset()
	WriteTable(&b, sampleReport(), TableOptions{Verbose: true})
	if !strings.Contains(b.String(), "(needs python)") || strings.Contains(b.String(), "not listed") {
		t.Errorf("-v must list the N/A rows with their reasons:\n%s", b.String())
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour without Color")
	}
	b.Reset()
	WriteTable(&b, sampleReport(), TableOptions{Color: true})
	if !strings.Contains(b.String(), "\x1b[1;31mBREACH") {
		t.Error("no colour with Color")
	}
	// on screen (escapes take no columns) the columns line up, header and rows alike (trial30 F17)
	sameColumns(t, b.String(), "TIME")
	b.Reset()
	WriteControls(&b, []ControlResult{
		{Control: Control{Detector: "tcp", Scenario: "s1", Kind: "policy"}, Fired: true, Detail: "ev1"},
		{Control: Control{Detector: "udp", Scenario: "s2", Kind: "policy"}, Detail: "ev2"},
	}, true)
	sameColumns(t, b.String(), "EVIDENCE")
}

// sameColumns says whether, escapes stripped, every row of the table's first lines that has a
// cell in the header's column starts it there.
func sameColumns(t *testing.T, out, col string) {
	t.Helper()
	lines := strings.Split(regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(out, ""), "\n")
	at := strings.Index(lines[0], col)
	if at < 0 {
		t.Fatalf("no %s header:\n%s", col, out)
	}
	for _, l := range lines[1:] {
		if l == "" || strings.HasPrefix(l, "(") || strings.HasPrefix(l, " ") {
			break
		}
		if len(l) <= at || l[at-1] != ' ' || l[at] == ' ' {
			t.Errorf("the %s column starts at %d in the header, not in %q", col, at, l)
		}
	}
}

func TestWriteJUnit(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJUnit(&b, sampleReport()); err != nil {
		t.Fatal(err)
	}
	var s junitSuite
	if err := xml.Unmarshal(b.Bytes(), &s); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	if s.Tests != 4 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 || s.Cases[1].Failure == nil || s.Cases[3].Skipped == nil {
		t.Fatalf("junit = %+v", s)
	}
}

// A release build's stand-in controls are n/a with the reason, not silent; any other N/A is.
func TestWriteControlsTestBuildOnly(t *testing.T) {
	var b bytes.Buffer
	err := WriteControls(&b, []ControlResult{
		{Control: Control{Detector: "tcp", Scenario: "s1", Kind: "policy"}, Fired: true},
		{Control: Control{Detector: "forbidden_host", Scenario: "s2", Kind: "policy"}, Outcome: NotApplicable, Detail: testhooks.NeedsTestBuild},
	}, false)
	if err != nil || !strings.Contains(b.String(), "all 1 controls this build can run fired; 1 n/a (needs a test build") {
		t.Fatalf("err = %v, out:\n%s", err, b.String())
	}
	b.Reset()
	err = WriteControls(&b, []ControlResult{
		{Control: Control{Detector: "udp", Scenario: "s2", Kind: "policy"}, Outcome: NotApplicable, Detail: "needs a python interpreter allowlisted"},
	}, false)
	if err == nil || !strings.Contains(b.String(), "silent: udp") {
		t.Fatalf("another N/A must stay silent: err = %v, out:\n%s", err, b.String())
	}
}

func TestWriteControlsNamesSilentDetector(t *testing.T) {
	var b bytes.Buffer
	err := WriteControls(&b, []ControlResult{
		{Control: Control{Detector: "tcp", Scenario: "s1", Kind: "policy"}, Fired: true},
		{Control: Control{Detector: "udp", Scenario: "s2", Kind: "policy"}, Fired: false},
	}, false)
	if err == nil || !strings.Contains(err.Error(), "udp (s2)") || !strings.Contains(b.String(), "silent: udp") {
		t.Fatalf("err = %v, out:\n%s", err, b.String())
	}
}
