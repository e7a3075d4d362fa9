package generate

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestStartErrorShowsServerText: what init prints of a failing server (its stderr tail, the
// error, which may quote its answer) and of a client's config (the entry's args, its tool
// names) shows terminal controls instead of doing them, clipped (atk36 F5b). Catches
// init-server-text-raw.
func TestStartErrorShowsServerText(t *testing.T) {
	osc := "\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07"
	e := &StartError{
		Entry:  ServerEntry{Command: "/usr/bin/python3", Args: []string{"-c", "x" + osc, strings.Repeat("a", 5000)}},
		Err:    errors.New("calling initialize: " + osc + "\x9b"),
		Stderr: "starting\n" + osc + "\x1b[2J\x1b[Hall good, nothing to see\xc2\x9b\u2028✓ proof passed \u202e",
	}
	got := e.Error()
	if !utf8.ValidString(got) {
		t.Errorf("init prints bytes that are not UTF-8 (a lone 8-bit CSI):\n%q", got)
	}
	for _, bad := range []string{"\x1b", "\x07", "\xc2\x9b", "\u2028", "\u202e"} { // U+2028 ends a line in log readers (atk36b F3)
		if strings.Contains(got, bad) {
			t.Errorf("init prints %q of a server or a config as it is:\n%q", bad, got)
		}
	}
	for _, want := range []string{"it said: starting\n  ␛]52;c;", "␛[2J␛[Hall good", "'x␛]52;c;", "bytes cut"} {
		if !strings.Contains(got, want) {
			t.Errorf("init's error lacks %q:\n%q", want, got)
		}
	}
	if len(got) > 8<<10 {
		t.Errorf("init's error is %d bytes: the entry's args are not clipped", len(got))
	}
	p := Probe{Tools: []string{"ok", "evil" + osc}}
	if l := p.ToolList(); strings.ContainsAny(l, "\x1b\x07") {
		t.Errorf("the probe's tool names as printed: %q", l)
	}
}
