package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Lines written before the workspace record named its applied changes (testdata: written by
// the code of that time, with workspace records) verify as they did, and a log holding them
// takes new lines that do name them, one chain (trial37 F8).
func TestLinesBeforeAppliedStillVerify(t *testing.T) {
	old, err := os.ReadFile("testdata/before-applied.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := Verify(strings.NewReader(string(old))); err != nil || rep.Lines != 4 || len(rep.Problems) > 0 {
		t.Fatalf("the old lines: %+v %v", rep, err)
	}
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	os.WriteFile(path, old, 0o600)
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := &WorkspaceRecord{Committed: 3, Bytes: 1, Refused: 2, Deleted: 1, Applied: []AppliedRecord{
		{Op: "delete", Path: "calc.go"}, {Op: "write", Path: "build/a.o", Bytes: 1, SHA256: strings.Repeat("ab", 32)}, {Op: "mkdir", Path: "build"}}}
	if err := l.Append(Entry{Tool: "run_allowed_command", Decision: "ran", Workspace: w}); err != nil {
		t.Fatal(err)
	}
	l.Close()
	ls := lines(t, path)
	last := ls[len(ls)-1]
	if !strings.Contains(last, `"workspace":{"committed":3,"bytes":1,"refused":2,"deleted":1,"applied":[{"op":"delete","path":"calc.go"},{"op":"write","path":"build/a.o","bytes":1,"sha256":"abab`) {
		t.Errorf("the new line does not name the applied changes:\n%s", last)
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != 5 {
		t.Fatalf("verify after a new line: %+v %v", rep, err)
	}
}

// However many applied changes a call names and whatever their paths hold, the line stays
// within MaxLine with at most maxApplied named, every other one counted in applied_more, a
// "workspace.applied" clip record when any was cut, secrets redacted, and the chain verifies.
// Red with mutant audit-bound-applied.
func TestBoundHostileApplied(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, []string{"MY_API_TOKEN=hunter2-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	applied := func(v string, n int) *WorkspaceRecord {
		w := &WorkspaceRecord{Committed: n + 7, AppliedMore: 7}
		for i := range n {
			w.Applied = append(w.Applied, AppliedRecord{Op: "write", Path: fmt.Sprintf("%d/%s", i, v), Bytes: int64(i), SHA256: strings.Repeat("0", 64)})
		}
		return w
	}
	entries := []Entry{
		{Tool: "t", Decision: "ran", Workspace: applied("ok", 3)},
		{Tool: "t", Decision: "ran", Workspace: applied("ok", 1000)},
		{Tool: "t", Decision: "ran", Workspace: &WorkspaceRecord{Committed: 1, Applied: []AppliedRecord{{Op: "delete", Path: "a/hunter2-secret-value/b"}}}},
	}
	for _, v := range hostile {
		v = v[:16<<10]
		entries = append(entries, Entry{Tool: "t", Decision: "ran", Workspace: applied(v, 15)}, Entry{Tool: "t", Decision: "ran", Workspace: applied(v, 100)})
	}
	worst := Entry{Workspace: applied(hostile["1MiB of <"][:16<<10], 100)}
	for i := range 30 {
		worst.Files = append(worst.Files, FileRecord{Op: "<<<<", Path: strings.Repeat("<", 4096), Bytes: int64(i), SHA256: strings.Repeat("<", 100)})
	}
	for _, field := range fields[:10] {
		setField(&worst, field, hostile["1MiB of <"])
	}
	for i := range 50 {
		worst.Clipped = append(worst.Clipped, Clip{Field: strings.Repeat("<", 1000+i), Bytes: 1, SHA256: strings.Repeat("&", 5000)})
	}
	entries = append(entries, worst)
	for i, e := range entries {
		in := len(e.Workspace.Applied)
		if err := l.Append(e); err != nil {
			t.Fatalf("entry %d (%d applied): %v", i, in, err)
		}
		if len(e.Workspace.Applied) != in {
			t.Fatalf("entry %d: Append changed the caller's record", i)
		}
		ls := lines(t, path)
		last := ls[len(ls)-1]
		if len(last)+1 > MaxLine {
			t.Fatalf("entry %d: a line of %d bytes, bound %d", i, len(last)+1, MaxLine)
		}
		var got Entry
		if err := json.Unmarshal([]byte(last), &got); err != nil {
			t.Fatal(err)
		}
		w := got.Workspace
		if w == nil || len(w.Applied) > maxApplied || len(w.Applied)+w.AppliedMore != in+e.Workspace.AppliedMore {
			t.Fatalf("entry %d: %d named + %d counted, want %d in all, at most %d named", i, len(w.Applied), w.AppliedMore, in+e.Workspace.AppliedMore, maxApplied)
		}
		if i == 0 && len(w.Applied) != 3 || i == 1 && len(w.Applied) != maxApplied {
			t.Errorf("entry %d: %d named, want %d", i, len(w.Applied), min(in, maxApplied))
		}
		clipped := false
		for _, c := range got.Clipped {
			clipped = clipped || c.Field == "workspace.applied"
		}
		if cut := i != 0 && i != 2; cut != clipped {
			t.Errorf("entry %d: a workspace.applied clip record %v, want %v", i, clipped, cut)
		}
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "hunter2") {
		t.Error("a secret in an applied change's path was logged")
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != len(entries) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}
