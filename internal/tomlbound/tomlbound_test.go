package tomlbound

import (
	"errors"
	"strings"
	"testing"
)

// TestCheckDepth: brackets count outside strings and comments only, and the line of the first
// level past the bound is reported, counting the lines of multi-line strings.
func TestCheckDepth(t *testing.T) {
	deep := strings.Repeat("[", 3)
	for _, c := range []struct {
		text string
		line int // 0: passes
	}{
		{"a = [[1]]\n", 0},
		{"a = [[[1]]]\n", 1},
		{"a = {b = {c = {d = 1}}}\n", 1},
		{"[[t]]\nx = 1\n", 0},
		{`a = "` + deep + `"` + "\n", 0},
		{`a = "\"` + deep + `"` + "\n", 0},
		{`a = '\` + `'` + "\nb = [[[1]]]\n", 2}, // a literal string has no escapes
		{"a = '" + deep + "'\n", 0},
		{"# " + deep + "\nb = 1\n", 0},
		{"a = \"\"\"\n" + deep + "\n\\\"\"\"\n" + deep + "\"\"\"\nb = [[[1]]]\n", 5},
		{"a = '''\n" + deep + "''''\nb = [[[1]]]\n", 3},
		{"a = \"\"\"x\"\"\"\"\"\nb = [[[1]]]\n", 2}, // up to two quotes close it with the triple
		{"a = \"unterminated [[[\nb = [[[1]]]\n", 2},
		{"a = \"\"\"never closed\n" + deep, 0},
	} {
		err := CheckDepth([]byte(c.text), 2)
		var de *DepthError
		switch {
		case c.line == 0 && err != nil:
			t.Errorf("%q: %v", c.text, err)
		case c.line != 0 && (!errors.As(err, &de) || de.Line != c.line || de.Max != 2):
			t.Errorf("%q: %v, want a depth error at line %d", c.text, err, c.line)
		}
	}
}
