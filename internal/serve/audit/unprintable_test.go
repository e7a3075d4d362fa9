package audit

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

// Every model-controlled string of a line (the tool name, the arguments' keys and values, the
// reason) is written with the runes a terminal does not print as their \u escapes: the file's
// bytes hold no raw bidi control, zero-width or tag character for `tail`, `less` or `grep` to
// lay out reordered, a JSON reader decodes the same strings, and the chain verifies, a line of
// the whole bound included (atk40 F3). Red with mutant audit-bidi-raw.
func TestLineEscapesWhatTerminalsDoNotPrint(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tool := "run\u202eLLA_ETELED"
	args := "{\"code\":\"os.remove('notes.txt') #\u202e txt.seton daer\",\"c\u200bwd\u202edlo\":\"/\",\"t\":\"\U000E0041\u061c\u2066x\u2069\u200f\u0085\"}"
	long := "{\"code\":\"" + strings.Repeat("\u202e", 8000) + "\"}" // past MaxLine once escaped: clipped, still bounded
	for _, a := range []string{args, long} {
		if err := l.Append(Entry{Tool: tool, Arguments: json.RawMessage(a), Decision: "refused", Reason: "unknown tool \u2067" + tool}); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range string(b) {
		if r > unicode.MaxASCII && !unicode.IsPrint(r) {
			t.Fatalf("the log holds %U raw: %.300q", r, b)
		}
	}
	ls := lines(t, path)
	for _, s := range ls {
		if len(s) >= MaxLine {
			t.Errorf("a line of %d bytes, over MaxLine", len(s))
		}
	}
	var e Entry
	if err := json.Unmarshal([]byte(ls[0]), &e); err != nil {
		t.Fatal(err)
	}
	if e.Tool != tool || !strings.Contains(e.Reason, "\u2067") {
		t.Errorf("decoded tool %q, reason %q: want the strings as sent", e.Tool, e.Reason)
	}
	var got, want any
	if json.Unmarshal(e.Arguments, &got) != nil || json.Unmarshal([]byte(args), &want) != nil || !jsonEqual(got, want) {
		t.Errorf("decoded arguments %s, want %s", e.Arguments, args)
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || len(rep.Problems) > 0 || rep.Lines != 2 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
}

// A line written before the escaping (its hash covers the runes raw) still verifies.
func TestLineWithRawRunesFromBeforeVerifies(t *testing.T) {
	e := Entry{Tool: "run\u202eX", Arguments: json.RawMessage("{\"a\":\"\u200b\"}"), Decision: "refused"}
	line, err := e.sealWith(json.Marshal)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(line), "\u202e") {
		t.Fatalf("the old encoding: %q", line)
	}
	if h, why := checkEntry(line); h == "" || why != "" {
		t.Errorf("an old line with raw runes: %q", why)
	}
	// an edit is still one: the same line with its tool changed
	edited := []byte(strings.Replace(string(line), "run", "rum", 1))
	if _, why := checkEntry(edited); why == "" {
		t.Error("an edited old line verified")
	}
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
