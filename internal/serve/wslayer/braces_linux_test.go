package wslayer

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// braceExpand gives bash's words in bash's order (the want column is bash 5.2's `echo` of each
// word): a command line's first is the script it runs, so a descending or padded sequence
// ending up sorted or unpadded would protect another file.
func TestBraceExpandAsBash(t *testing.T) {
	for _, k := range []struct {
		w    string
		want string
	}{
		{"{3..1}", "3 2 1"},
		{"{01..03}", "01 02 03"},
		{"{-01..2}", "-01 000 001 002"},
		{"{1..10..3}", "1 4 7 10"},
		{"{a..e..2}", "a c e"},
		{"a{b,c{d,e}f}g", "abg acdfg acefg"},
		{"{x,y}{1..3..2}", "x1 x3 y1 y3"},
		{"{a..c}{,_}", "a a_ b b_ c c_"},
		{"${a,b}{c,d}", "${a,b}c ${a,b}d"}, // bash's ${…} is a parameter's (it expands to nothing)
		{"{a,{b}}", "a {b}"},
		{"{a,b", "{a,b"},
		{"{a}", "{a}"},
	} {
		got, ok := braceExpand(k.w, 64)
		if !ok || !reflect.DeepEqual(got, strings.Fields(k.want)) {
			t.Errorf("braceExpand(%q) = %q, %v; bash gives %q", k.w, got, ok, k.want)
		}
	}
}

// A hostile word's expansion stops within its budget with what it has, complete false: past
// the words' limit, and past the work (nesting that rebuilds a 1 MiB word, unmatched braces
// each scanned to the end).
func TestBraceExpandBounded(t *testing.T) {
	for name, w := range map[string]string{
		"words":     strings.Repeat("{a,b}", 20),
		"sequences": strings.Repeat("{1..1}", 1<<17),
		"unmatched": strings.Repeat("{", 1<<20),
		"nested":    strings.Repeat("{", 1<<15) + "a,b" + strings.Repeat("}", 1<<15),
	} {
		words, ok := braceExpand(w, 64)
		if ok || len(words) > 64 {
			t.Errorf("%s: %d words, complete %v; want at most 64, incomplete", name, len(words), ok)
		}
	}
}

// A hook's line naming its script by a descending sequence of more words than are kept runs the
// first word bash makes (scripts/run99.py): that file is protected, though sorted it would be
// past the 64 words read. Red with mutant workspace-config-shell-braces.
func TestCommitHookShellLineSequence(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	ws := t.TempDir()
	write(t, filepath.Join(ws, ".claude", "settings.json"), claudeHook(`python3 scripts/run{99..01}.py`))
	for _, f := range []string{"run01.py", "run64.py", "run99.py"} {
		write(t, filepath.Join(ws, "scripts", f), "print(1)\n")
	}
	loadRefused(t, ws, "scripts/run99.py", `".claude/settings.json\" starts`)
}
