package audit

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A call's refused changes are named in its line with their rule (trial38 F3: the line said
// "refused": 2 and which files the AI tried to plant was only in the client's transcript): at
// most maxApplied named, the rest counted in refused_more, each path and reason bounded and
// redacted, and with every other field hostile at once (the client's name, the policy path,
// the workspace directory: trial38 F2) the line stays within MaxLine and the chain verifies.
// Red with mutant audit-bound-refused.
func TestBoundHostileRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, []string{"MY_API_TOKEN=hunter2-secret-value"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	refused := func(v string, n int) *WorkspaceRecord {
		w := &WorkspaceRecord{Committed: 1, Refused: n}
		for i := range n {
			w.RefusedChanges = append(w.RefusedChanges, RefusedRecord{Path: fmt.Sprintf("%d/%s", i, v), Why: "protected: " + v})
		}
		return w
	}
	entries := []Entry{
		{Tool: "t", Decision: "ran", Client: "claude-code 2.1.332", PolicyPath: "/p/policy.toml", WorkDir: "/w",
			Workspace: &WorkspaceRecord{Committed: 1, Refused: 2, RefusedChanges: []RefusedRecord{{Path: "CLAUDE.md", Why: `protected ("CLAUDE.md")`}, {Path: "a/hunter2-secret-value", Why: "x"}}}},
		{Tool: "t", Decision: "ran", Workspace: refused("ok", 1000)},
	}
	for _, v := range hostile {
		v = v[:16<<10]
		entries = append(entries, Entry{Tool: "t", Decision: "ran", Workspace: refused(v, 100)})
	}
	worst := Entry{Workspace: refused(hostile["1MiB of <"][:16<<10], 100)}
	for i := range 100 {
		worst.Workspace.Applied = append(worst.Workspace.Applied, AppliedRecord{Op: "<<<<", Path: strings.Repeat("<", 4096), Bytes: int64(i), SHA256: strings.Repeat("<", 100)})
	}
	for i := range 30 {
		worst.Files = append(worst.Files, FileRecord{Op: "<<<<", Path: strings.Repeat("<", 4096), Bytes: int64(i), SHA256: strings.Repeat("<", 100)})
	}
	for _, field := range fields {
		setField(&worst, field, hostile["1MiB of <"])
	}
	entries = append(entries, worst)
	for i, e := range entries {
		in := len(e.Workspace.RefusedChanges)
		if err := l.Append(e); err != nil {
			t.Fatalf("entry %d (%d refused): %v", i, in, err)
		}
		if len(e.Workspace.RefusedChanges) != in {
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
		if w == nil || len(w.RefusedChanges) > maxApplied || len(w.RefusedChanges)+w.RefusedMore != in {
			t.Fatalf("entry %d: %d named + %d counted, want %d in all, at most %d named", i, len(w.RefusedChanges), w.RefusedMore, in, maxApplied)
		}
		if i == 0 && (len(w.RefusedChanges) != 2 || w.RefusedChanges[0] != RefusedRecord{Path: "CLAUDE.md", Why: `protected ("CLAUDE.md")`} ||
			got.Client != "claude-code 2.1.332" || got.PolicyPath != "/p/policy.toml" || got.WorkDir != "/w") {
			t.Errorf("entry 0 as logged: %s", last)
		}
		if i == 1 && len(w.RefusedChanges) != maxApplied {
			t.Errorf("entry 1: %d named, want %d", len(w.RefusedChanges), maxApplied)
		}
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "hunter2") {
		t.Error("a secret in a refused change's path was logged")
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || rep.Lines != len(entries) {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// The workspace paths of a line are shown as the call's result shows them (visible.Name): a
// bidi override or U+2028 in a refused or applied path is escaped, so `jq -c` does not print
// it raw for the terminal to lay out (atk38b F6). Red with mutant audit-paths-raw.
func TestWorkspacePathsShownInTheLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	w := &WorkspaceRecord{Committed: 1, Refused: 1,
		Applied:        []AppliedRecord{{Op: "write", Path: "a\u2028b.txt", Bytes: 1}},
		RefusedChanges: []RefusedRecord{{Path: "notes\u202edm.STNEGA/AGENTS.md", Why: "protected"}}}
	if err := l.Append(Entry{Tool: "t", Decision: "ran", Workspace: w}); err != nil {
		t.Fatal(err)
	}
	ls := lines(t, path)
	var e Entry
	if err := json.Unmarshal([]byte(ls[len(ls)-1]), &e); err != nil {
		t.Fatal(err)
	}
	got := e.Workspace.RefusedChanges[0].Path + " " + e.Workspace.Applied[0].Path
	if strings.ContainsAny(got, "\u202e\u2028") || !strings.Contains(got, `\u202e`) || !strings.Contains(got, `\u2028`) {
		t.Errorf("paths in the line: %q, want them shown escaped", got)
	}
}
