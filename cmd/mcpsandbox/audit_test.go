package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpsandbox/mcpsandbox/internal/serve/audit"
)

// audit verify: an empty log says so plainly and exits 0; an intact one gives its head; an
// edited one is TAMPERED with exit 1.
func TestAuditVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, _, err := runCLI("audit", "verify", empty)
	if err != nil || out != empty+": empty log: nothing to verify (serve appends one line per call)\n" {
		t.Fatalf("empty log: %v %q", err, out)
	}

	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"a", "b"} {
		if err := l.Append(audit.Entry{Server: "s", Tool: tool, Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	out, _, err = runCLI("audit", "verify", path)
	if err != nil || !strings.Contains(out, ": intact, 2 lines, head ") || strings.Contains(out, "empty") {
		t.Fatalf("intact log: %v %q", err, out)
	}
	b, _ := os.ReadFile(path)
	os.WriteFile(path, []byte(strings.Replace(string(b), `"tool":"a"`, `"tool":"x"`, 1)), 0o600)
	_, errOut, err := runCLI("audit", "verify", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, "TAMPERED: line 1") {
		t.Fatalf("edited log: %v %q", err, errOut)
	}
}

// Lines not written by mcpsandbox (over-long, malformed) are each named with their number and
// fail verify, also when serve chained over them afterwards.
func TestAuditVerifyNamesForeignLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	app := func() {
		if err := l.Append(audit.Entry{Server: "s", Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(s string) {
		fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		fh.WriteString(s)
		fh.Close()
	}
	app()
	raw(strings.Repeat("<", 200<<10) + "\n")               // line 2
	raw(`{"tool":"t","decision":"ran","hash":"x"}` + "\n") // line 3
	app()                                                  // line 4: marker, 5: entry
	app()                                                  // line 6
	raw(`{"broken` + "\n")                                 // line 7
	_, errOut, err := runCLI("audit", "verify", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 {
		t.Fatalf("verify: %v %q", err, errOut)
	}
	for _, want := range []string{"TAMPERED: line 2: not an audit entry", "over-long: mcpsandbox lines are at most 16384", "TAMPERED: line 3: not an audit entry", "TAMPERED: line 7: not an audit entry", "3 of 7 lines"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("verify output lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "line 4") || strings.Contains(errOut, "line 5") {
		t.Errorf("the marker or the entry after it was flagged:\n%s", errOut)
	}
}
