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

// The runes unicode.IsPrint passes that render as nothing are escaped too: variation selectors
// (256 of them carry any bytes: `exec(bytes(ord(c)-0xE0100 for c in '…'))` showed its
// string empty), U+034F, the Hangul fillers, U+17B4, U+180B, the Braille blank, and combining
// marks with no letter under them or piled past four; a letter's own accent stays as it is. The
// entry decodes to what was sent, and a line written with the previous escaping (only what
// IsPrint refuses) still verifies (atk41 F6). Red with mutant audit-escape-ignorables.
func TestLineEscapesRunesThatRenderAsNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	l, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	hide := []rune{0xFE00, 0xFE0F, 0xE0100, 0xE01EF, 0x034F, 0x115F, 0x1160, 0x3164, 0xFFA0, 0x17B4, 0x180B, 0x2800, 0x7F, 0x16FE4, 0x1D159}
	payload := strings.Repeat(string(rune(0xE0100+'i'))+string(rune(0xE0100+'d')), 20)
	args := "{\"script\":\"python3 -c \\\"exec(bytes(ord(c)-0xE0100 for c in '" + payload + "'))\\\"\",\"x\":\"" + string(hide) +
		"\",\"m\":\"\u0301a\u0301e\u0300\u0301\u0302\u0303\u0304\u0305\u0306\",\"ok\":\"caf\u00e9 cafe\u0301 \u0928\u092e\u0938\u094d\u0924\u0947\"}"
	if err := l.Append(Entry{Tool: "run_shell" + string(rune(0xFE0F)), Arguments: json.RawMessage(args), Decision: "refused", Reason: "r\u3164"}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range append(hide, 0x0305, 0x0306) {
		if strings.ContainsRune(string(b), r) {
			t.Errorf("the log holds %U raw", r)
		}
	}
	if strings.HasPrefix(string(b), "\u0301") || strings.Contains(string(b), "\"\u0301") {
		t.Errorf("a combining mark on the string's quote is raw")
	}
	if !strings.Contains(string(b), "caf\u00e9 cafe\u0301 \u0928\u092e\u0938\u094d\u0924\u0947") || !strings.Contains(string(b), "a\u0301e\u0300\u0301\u0302\u0303") {
		t.Errorf("a letter's own marks were escaped: %.400q", b)
	}
	ls := lines(t, path)
	var e Entry
	if err := json.Unmarshal([]byte(ls[0]), &e); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if json.Unmarshal(e.Arguments, &got) != nil || json.Unmarshal([]byte(args), &want) != nil || !jsonEqual(got, want) || e.Reason != "r\u3164" {
		t.Errorf("decoded arguments %s, want %s", e.Arguments, args)
	}
	f, _ := os.Open(path)
	defer f.Close()
	if rep, err := Verify(f); err != nil || len(rep.Problems) > 0 || rep.Lines != 1 {
		t.Fatalf("verify: %+v %v", rep, err)
	}
	// a line of the previous escaping: the bidi control escaped, the selector raw
	old := Entry{Tool: "run\u202eX", Arguments: json.RawMessage("{\"a\":\"" + string(rune(0xE0100)) + "\"}"), Decision: "refused"}
	line, err := old.sealWith(marshalPrintOnly)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(line), "\u202e") || !strings.ContainsRune(string(line), 0xE0100) {
		t.Fatalf("the previous encoding: %q", line)
	}
	if h, why := checkEntry(line); h == "" || why != "" {
		t.Errorf("a line of the previous escaping: %q", why)
	}
}
