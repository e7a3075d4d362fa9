package main

import (
	"encoding/json"
	"fmt"
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
	if err != nil || !strings.HasPrefix(out, empty+": empty log: nothing to verify (serve appends one line per call)\n") {
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

// A line edited as atk32 F4 did (a fake "tool", "arguments" and "decision" first, the real ones
// after them under keys differing in case) keeps its hash, yet jq reads the fake: verify names
// the line and the key and exits 1.
func TestAuditVerifyRefusesCaseVariantKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"path":"keep.txt","content":"precious\n"}`)
	for _, d := range []string{audit.DecisionStarted, "ran"} {
		if err := l.Append(audit.Entry{Server: "sandbox", Call: "c1", Tool: "write_file", Arguments: args, Decision: d}); err != nil {
			t.Fatal(err)
		}
	}
	l.Close()
	b, _ := os.ReadFile(path)
	ls := strings.SplitAfter(string(b), "\n")
	ls[1] = strings.NewReplacer(`"tool":"write_file"`, `"tool":"list_files","Tool":"write_file"`,
		`"arguments":{`, `"arguments":{"path":"."},"ARGUMENTS":{`,
		`"decision":"ran"`, `"decision":"refused","DECISION":"ran"`).Replace(ls[1])
	if err := os.WriteFile(path, []byte(strings.Join(ls, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runCLI("audit", "verify", path)
	want := path + `: TAMPERED: line 2: the keys "tool" and "Tool" at the top level are equal under case folding`
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, want) || strings.Contains(out, "intact") {
		t.Fatalf("edited log: %v\nstdout %q\nstderr %q\nwant %q", err, out, errOut, want)
	}
}

// audit verify with serve's anchor: a log emptied in place is TRUNCATED, not "intact"; rotated
// files given oldest first verify as one history; lines lost between a copytruncate's copy and
// its truncation are a GAP (trial38 F5).
func TestAuditVerifyAnchorAndRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	l, err := audit.Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	add := func() {
		if err := l.Append(audit.Entry{Server: "s", Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	add()
	add()
	out, errOut, err := runCLI("audit", "verify", path)
	if err != nil || !strings.Contains(out, "ends at the last line serve wrote") {
		t.Fatalf("intact log: %v %q %q", err, out, errOut)
	}
	b, _ := os.ReadFile(path)
	old := path + ".1"
	os.WriteFile(old, b, 0o600) // copytruncate
	os.Truncate(path, 0)
	_, errOut, err = runCLI("audit", "verify", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, "TRUNCATED: the log (0 lines, 0 bytes) ends before") {
		t.Fatalf("emptied log: %v %q", err, errOut)
	}
	add()
	out, errOut, err = runCLI("audit", "verify", old, path)
	if err != nil || !strings.Contains(out, "one history") {
		t.Fatalf("rotated pair: %v %q %q", err, out, errOut)
	}
	// a line written between the copy and the truncation is lost: a gap
	b, _ = os.ReadFile(path)
	os.WriteFile(old, b, 0o600)
	add()
	os.Truncate(path, 0)
	add()
	_, errOut, err = runCLI("audit", "verify", old, path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, "GAP") || !strings.Contains(errOut, "(its line 1)") {
		t.Fatalf("lost line between copy and truncation: %v %q", err, errOut)
	}
	// the anchor's line removed from the end (tail truncation)
	b, _ = os.ReadFile(path)
	add()
	os.WriteFile(path, b, 0o600)
	_, errOut, err = runCLI("audit", "verify", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, "TRUNCATED") {
		t.Fatalf("tail cut: %v %q", err, errOut)
	}
}

// audit verify after serve's next line: a log cut behind the anchor fails on serve's cut marker,
// saying what is gone and where; a log emptied in place (or rotated, the rotated file not given)
// says that it continues an earlier history not given, exits 2 and claims nothing proven of
// that history; rotated files given as README says verify whole, exit 0 (atk38b F1: both
// verified "intact … proven" after one more call).
func TestAuditVerifyAfterACutAndTheNextLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	add := func(n int) {
		t.Helper()
		l, err := audit.Open(path, nil) // each call a new serve, as the attack's
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for range n {
			if err := l.Append(audit.Entry{Server: "s", Tool: "t", Decision: "ran"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	add(6)
	b, _ := os.ReadFile(path)
	ls := strings.SplitAfter(string(b), "\n")
	kept := strings.Join(ls[:2], "")
	os.WriteFile(path, []byte(kept), 0o600)
	add(1)
	out, errOut, err := runCLI("audit", "verify", path)
	want := fmt.Sprintf(`TAMPERED: line 3: a "cut" marker: serve found the log cut before this line: it had written up to byte %d`, len(b))
	gone := fmt.Sprintf("what it wrote after line 2 (bytes %d to %d) is gone", len(kept), len(b))
	if ee, ok := err.(*exitError); !ok || ee.code != 1 || !strings.Contains(errOut, want) || !strings.Contains(errOut, gone) || strings.Contains(out, "proven") {
		t.Fatalf("cut, then a line: %v\nstdout %q\nstderr %q", err, out, errOut)
	}

	// emptied in place, then a line: the log alone continues a history not given
	path = filepath.Join(dir, "b.jsonl")
	add(2)
	b, _ = os.ReadFile(path)
	a, _ := audit.ReadAnchor(path)
	os.Truncate(path, 0)
	add(1)
	out, errOut, err = runCLI("audit", "verify", path)
	want = fmt.Sprintf("%s: continues an earlier history (head %.16s…, byte %d) not given: not verified", path, a.Head, a.Bytes)
	if ee, ok := err.(*exitError); !ok || ee.code != 2 || !strings.Contains(errOut, want) ||
		strings.Contains(out, "proven: every line") || !strings.Contains(out, "Not proven: the history before "+path) {
		t.Fatalf("emptied, then a line: %v\nstdout %q\nstderr %q\nwant %q", err, out, errOut, want)
	}

	// rotated as README says (copytruncate, then create), every file given: one history, exit 0
	os.WriteFile(path+".0", b, 0o600) // what was emptied, as a copytruncate's copy
	add(1)
	os.Rename(path, path+".1")
	os.WriteFile(path, nil, 0o600)
	add(2)
	out, errOut, err = runCLI("audit", "verify", path+".0", path+".1", path)
	if err != nil || errOut != "" || !strings.Contains(out, "proven: every line is serve's") || !strings.Contains(out, "one history") {
		t.Fatalf("rotated files given: %v\nstdout %q\nstderr %q", err, out, errOut)
	}
	// the oldest rotated file deleted (logrotate's rotate N): the rest continue one not given
	_, errOut, err = runCLI("audit", "verify", path+".1", path)
	if ee, ok := err.(*exitError); !ok || ee.code != 2 || !strings.Contains(errOut, path+".1: continues an earlier history") {
		t.Fatalf("oldest not given: %v %q", err, errOut)
	}
}
