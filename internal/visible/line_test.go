package visible

import "testing"

// TestLineShowsWhatEndsOrReordersALine: U+2028, U+2029, NEL, bidi overrides and isolates, a
// zero-width joiner's kin and a newline are shown as escapes in a log line; printable text of
// any script is left as it is (atk36b F3). Catches log-line-unprintable.
func TestLineShowsWhatEndsOrReordersALine(t *testing.T) {
	for in, want := range map[string]string{
		"ready\u2028time=x level=ERROR msg=forged": `ready\u2028time=x level=ERROR msg=forged`,
		"para\u2029graph":                          `para\u2029graph`,
		"x\u202etxt.exe":                           `x\u202etxt.exe`,
		"\u2066isolate\u2069 \u200fmark":           `\u2066isolate\u2069 \u200fmark`,
		"two\nlines":                               `two\nlines`,
		"nel \u0085 c1":                            "nel ␛E c1", // a C1 control, as Text shows it
		"esc \x1b[2J":                              "esc ␛[2J",
		"plain text, tabs\tand spaces":             "plain text, tabs\tand spaces",
		"日本語 ελληνικά עברית ✓":                     "日本語 ελληνικά עברית ✓",
	} {
		if got := Line(in); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	if got, want := Lines("one\u2028\ntwo\u202e"), "one\\u2028\ntwo\\u202e"; got != want {
		t.Errorf("Lines = %q, want %q", got, want)
	}
}
