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
