package audit

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func lastEntry(t *testing.T, b []byte) Entry {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var e Entry
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &e); err != nil {
		t.Fatal(err)
	}
	return e
}

// A new chain at a path serve wrote before (emptied in place, or moved aside) names the head
// and length the log had when serve last wrote it, from the anchor kept beside it; a log's
// first chain names nothing (trial38 F5).
func TestNewChainLinksToTheAnchoredHead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for range 2 {
		if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	first, _ := os.ReadFile(path)
	if bytes.Contains(first, []byte(`"continues"`)) {
		t.Fatalf("a log's first chain links to nothing: %s", first)
	}
	a, err := ReadAnchor(path)
	if err != nil || a == nil || a.Head != lastEntry(t, first).Hash || a.Bytes != int64(len(first)) {
		t.Fatalf("anchor %+v, %v; want the last line's hash and %d bytes", a, err, len(first))
	}
	// copytruncate
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(path)
	rep, err := Verify(bytes.NewReader(second))
	if err != nil || rep.Continues == nil || rep.Continues.Head != a.Head || rep.Continues.Bytes != a.Bytes {
		t.Fatalf("after a truncation: %+v %v, want a link to %+v", rep.Continues, err, a)
	}
	// create-mode rotation
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
		t.Fatal(err)
	}
	third, _ := os.ReadFile(path)
	rep, err = Verify(bytes.NewReader(third))
	if err != nil || rep.Continues == nil || rep.Continues.Head != lastEntry(t, second).Hash || rep.Continues.Bytes != int64(len(second)) {
		t.Fatalf("after a rotation: %+v %v", rep.Continues, err)
	}
	a, _ = ReadAnchor(path)
	rep, _ = VerifyWith(bytes.NewReader(third), a)
	if !rep.AnchorSeen {
		t.Errorf("the anchored line is not found in the log serve just wrote")
	}
}

// cutCount is the number of cut markers in the log at path.
func cutCount(t *testing.T, path string) int {
	t.Helper()
	n := 0
	for _, s := range lines(t, path) {
		var e Entry
		if json.Unmarshal([]byte(s), &e) == nil && e.Tool == MarkerTool && e.Decision == DecisionCut {
			n++
		}
	}
	return n
}

// A log cut behind serve's anchor (lines removed from its end in place, or by a tool that
// writes a new file; by a new serve or under a running one) gets a cut marker at serve's next
// line, naming the anchored head and length and what was found, so the cut stays in the log
// once the anchor moves on, and Verify fails on it (atk38b F1: one more call made a log whose
// last 4 lines were removed verify intact).
func TestAppendMarksALogCutBehindTheAnchor(t *testing.T) {
	add := func(l *Log, n int) {
		t.Helper()
		for range n {
			if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
				t.Fatal(err)
			}
		}
	}
	keep := func(path string, n int) (kept []byte) {
		t.Helper()
		ls := lines(t, path)
		kept = []byte(strings.Join(ls[:n], "\n") + "\n")
		return kept
	}
	for _, c := range []struct {
		name    string
		running bool // the serve that wrote it goes on; else a new serve opens the log
		newFile bool // the cut copy replaces the file (sed -i); else it is written in place
	}{
		{"new serve, in place", false, false},
		{"new serve, new file", false, true},
		{"running serve, in place", true, false},
		{"running serve, new file", true, true},
	} {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		l, err := Open(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		add(l, 6)
		a, _ := ReadAnchor(path)
		kept := keep(path, 2)
		if !c.running {
			l.Close()
		}
		if c.newFile {
			if err := os.WriteFile(path+".tmp", kept, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".tmp", path); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(path, kept, 0o600); err != nil {
			t.Fatal(err)
		}
		if !c.running {
			if l, err = Open(path, nil); err != nil {
				t.Fatal(err)
			}
		}
		add(l, 1)
		l.Close()
		after := lines(t, path)
		var m Entry
		if len(after) != 4 || json.Unmarshal([]byte(after[2]), &m) != nil || m.Decision != DecisionCut || m.Rule != RuleCut || m.Cut == nil {
			t.Fatalf("%s: no cut marker after the lines kept: %q", c.name, after[2:])
		}
		if m.Cut.Anchored != (ChainLink{a.Head, a.Bytes}) || m.Cut.Found != (ChainLink{lastEntry(t, kept).Hash, int64(len(kept))}) || m.Prev != lastEntry(t, kept).Hash {
			t.Errorf("%s: the marker names %+v (prev %.12s), want anchored %+v, found the kept %d bytes", c.name, *m.Cut, m.Prev, *a, len(kept))
		}
		b, _ := os.ReadFile(path)
		rep, err := Verify(bytes.NewReader(b))
		if err == nil || len(rep.Problems) != 1 || rep.Problems[0].Line != 3 || !strings.Contains(rep.Problems[0].What, "is gone") {
			t.Errorf("%s: verify: %v %+v", c.name, err, rep.Problems)
		}
		// later appends by the same serve or a new one add no marker: the anchor holds again
		l, _ = Open(path, nil)
		add(l, 1)
		l.Close()
		if n := cutCount(t, path); n != 1 {
			t.Errorf("%s: %d cut markers after a later line, want the one", c.name, n)
		}
	}

	// another line in the anchored line's place (cut, then a line of serve's chained by hand)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, _ := Open(path, nil)
	add(l, 3)
	l.Close()
	kept := keep(path, 1)
	os.WriteFile(path, kept, 0o600)
	other := filepath.Join(t.TempDir(), "other.jsonl")
	ol, _ := Open(other, nil)
	add(ol, 5)
	ol.Close()
	os.WriteFile(path, append(kept, []byte(strings.Join(lines(t, other)[1:], "\n")+"\n")...), 0o600)
	l, _ = Open(path, nil)
	add(l, 1)
	l.Close()
	if n := cutCount(t, path); n != 1 {
		t.Errorf("another line where the anchored one was: %d cut markers, want 1", n)
	}
}

// What is not a cut gets no marker: lines appended after the anchored one (another writer by
// hand, a line whose anchor a crash did not write), an unfinished last line (its newline
// counted in the anchor), two serves taking turns on one log, rotations as README's recipe
// makes them (copytruncate, create, with a running serve and a new one), and a log with no
// anchor.
func TestAppendMarksNoCutWhereNoneIs(t *testing.T) {
	add := func(l *Log) {
		t.Helper()
		if err := l.Append(Entry{Tool: "t", Decision: "ran"}); err != nil {
			t.Fatal(err)
		}
	}
	raw := func(path, s string) {
		fh, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
		fh.WriteString(s)
		fh.Close()
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, _ := Open(path, nil)
	b, _ := Open(path, nil) // a second serve on the same log
	for range 3 {
		add(a)
		add(b)
	}
	// a line whose anchor a crash did not write: the anchor is left one line behind
	old, _ := os.ReadFile(AnchorPath(path))
	add(b)
	os.WriteFile(AnchorPath(path), old, 0o600)
	add(a)
	// an unfinished last line: a foreign marker, and the anchor counts the newline added
	raw(path, `{"half`)
	add(b)
	if an, _ := ReadAnchor(path); an == nil || an.Bytes != int64(len(mustRead(t, path))) {
		t.Fatalf("anchor %+v after ending an unfinished line, want the file's %d bytes", an, len(mustRead(t, path)))
	}
	add(a)
	// a complete foreign line
	raw(path, "hand-written\n")
	add(a)
	add(b)
	// copytruncate (README: can lose lines, not a cut), with both serves running
	os.WriteFile(path+".1", mustRead(t, path), 0o600)
	os.Truncate(path, 0)
	add(a)
	add(b)
	// create, with both running
	os.Rename(path, path+".2")
	os.WriteFile(path, nil, 0o600)
	add(b)
	add(a)
	a.Close()
	b.Close()
	// create, no serve running, then a new serve
	os.Rename(path, path+".3")
	os.WriteFile(path, nil, 0o600)
	c, _ := Open(path, nil)
	add(c)
	c.Close()
	// copytruncate, no serve running, then a new serve
	os.WriteFile(path+".4", mustRead(t, path), 0o600)
	os.Truncate(path, 0)
	c, _ = Open(path, nil)
	add(c)
	add(c)
	c.Close()
	for _, p := range []string{path + ".1", path + ".2", path + ".3", path + ".4", path} {
		if n := cutCount(t, p); n != 0 {
			t.Errorf("%s: %d cut markers where nothing was cut", p, n)
		}
	}
	// no anchor (a log from before anchors): nothing to compare
	os.Remove(AnchorPath(path))
	os.WriteFile(path, []byte(strings.Join(lines(t, path)[:1], "\n")+"\n"), 0o600)
	c, _ = Open(path, nil)
	add(c)
	c.Close()
	if n := cutCount(t, path); n != 0 {
		t.Errorf("a log with no anchor: %d cut markers", n)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
