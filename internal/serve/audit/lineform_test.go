package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// formLog writes, as serve does, a write_file outcome (line 2, after its "started" line) and a
// call refused for its duplicate argument keys (line 3, logged as sent).
func formLog(t *testing.T) (path string, ls []string) {
	t.Helper()
	path = filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	code := 0
	args := json.RawMessage(`{"path":"keep.txt","content":"precious\n"}`)
	for _, e := range []Entry{
		{Server: "sandbox", Call: "c1", Tool: "write_file", Arguments: args, Decision: DecisionStarted},
		{Server: "sandbox", Call: "c1", Tool: "write_file", Arguments: args, Decision: "ran", ExitCode: &code,
			Files:     []FileRecord{{Op: "write", Path: "keep.txt", Bytes: 9, SHA256: strings.Repeat("a", 64)}},
			Workspace: &WorkspaceRecord{Committed: 1, Bytes: 9}},
		{Server: "sandbox", Call: "c2", Tool: "write_file", Arguments: json.RawMessage(`{"path":"a","path":"b","PATH":"c"}`),
			Decision: "refused", Rule: RuleAmbiguousKeys},
	} {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	return path, lines(t, path)
}

// A line edited to carry a fake "tool", "decision" or file record first and the real one after
// it under a key differing only in case (or the same key again), or an added key, keeps its
// hash (Go reads the last, case-insensitively, and drops unknown keys) while jq and Python read
// the fake: verify names the line and the key (attack round atk32, F4).
func TestVerifyRefusesLinesNotAsServeWrites(t *testing.T) {
	path, ls := formLog(t)
	if rep, err := Verify(strings.NewReader(strings.Join(ls, "\n") + "\n")); err != nil || rep.Lines != 3 {
		t.Fatalf("the log as written (duplicate keys inside a refused call's arguments included): %+v %v", rep, err)
	}
	line := ls[1]
	edits := []struct{ name, edited, want string }{
		{"atk32 F4", strings.NewReplacer(
			`"tool":"write_file"`, `"tool":"list_files","Tool":"write_file"`,
			`"arguments":{"path":"keep.txt","content":"precious\n"}`, `"arguments":{"path":"."},"ARGUMENTS":{"path":"keep.txt","content":"precious\n"}`,
			`"decision":"ran"`, `"decision":"refused","rule":"allowlist.protect","DECISION":"ran","RULE":""`).Replace(line),
			`line 2: the keys "tool" and "Tool" at the top level are equal under case folding`},
		{"duplicate", strings.Replace(line, `"decision":"ran"`, `"decision":"refused","decision":"ran"`, 1),
			`line 2: the key "decision" appears twice at the top level`},
		{"nested", strings.Replace(line, `"path":"keep.txt","bytes"`, `"path":"other.txt","Path":"keep.txt","bytes"`, 1),
			`line 2: the keys "path" and "Path" in an object at depth 3 are equal under case folding`},
		{"unknown key", strings.TrimSuffix(line, "}") + `,"note":"reviewed by admin, harmless"}`,
			`line 2: not as serve writes it from byte`},
	}
	for _, c := range edits {
		if c.edited == line {
			t.Fatalf("%s: the edit did not apply", c.name)
		}
		if h, why := checkEntry([]byte(c.edited)); h == "" || strings.Contains(why, "does not match its hash") {
			t.Fatalf("%s: the edit should keep the hash (the attack's premise): %q", c.name, why)
		}
		log := strings.Join([]string{ls[0], c.edited, ls[2]}, "\n") + "\n"
		rep, err := Verify(strings.NewReader(log))
		if err == nil || !strings.Contains(err.Error(), c.want) || len(rep.Problems) != 1 {
			t.Errorf("%s: verify: %v (%d problems), want %q", c.name, err, len(rep.Problems), c.want)
		}
		if err != nil && !strings.Contains(err.Error(), "edited") {
			t.Errorf("%s: verify does not say the line was edited: %v", c.name, err)
		}
	}

	// serve, finding such a line last, chains over it with a marker (it is not its line).
	edited := strings.Replace(ls[2], `"tool":"write_file"`, `"tool":"list_files","TOOL":"write_file"`, 1)
	if err := os.WriteFile(path, []byte(strings.Join([]string{ls[0], ls[1], edited}, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	after := lines(t, path)
	if len(after) < 5 || !strings.Contains(after[3], `"decision":"foreign"`) || !strings.Contains(after[3], `\"tool\" and \"TOOL\"`) {
		t.Fatalf("no marker over the edited last line: %q", after[3:])
	}
	// the edited line was the anchored one, and it no longer ends where serve left it: a cut
	// marker says so too (atk38b F1)
	if len(after) != 6 || !strings.Contains(after[4], `"decision":"cut"`) {
		t.Fatalf("no cut marker after the foreign one: %q", after[4:])
	}
}

// withoutArguments blanks the top-level arguments only, however spelled, and nothing else.
func TestWithoutArguments(t *testing.T) {
	for in, want := range map[string]string{
		`{"tool":"t","arguments":{"a":1,"a":2},"x":[{"arguments":3}]}`: `{"tool":"t","arguments":null,"x":[{"arguments":3}]}`,
		`{"ARGUMENTS" : {"a":1},"arguments":"s"}`:                      `{"ARGUMENTS":null,"arguments":null}`,
		`{"tool":"t"}`: `{"tool":"t"}`,
		`[1]`:          `[1]`,
	} {
		if got := withoutArguments([]byte(in)); !bytes.Equal(got, []byte(want)) {
			t.Errorf("withoutArguments(%s) = %s, want %s", in, got, want)
		}
	}
}
