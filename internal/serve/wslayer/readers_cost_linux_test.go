package wslayer

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// finishes runs f and fails t when it has not returned within d: a reader quadratic on its
// input (a program or config a call wrote, read under the workspace lock) takes minutes at the
// sizes used here, a linear one milliseconds, so the bound judges the shape, not the speed.
func finishes(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	d *= raceSlowdown
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: not done after %v (quadratic in the text's size?)", what, d)
	}
}

// review41 #9: every `import` not followed by a clause's start looked 4,096 tokens ahead for
// `from` (1 MB of "import ": 600 million tokens). Two names in a row end a clause. Every import
// form is still read. Red without it (mutant workspace-js-import-lookahead).
func TestJSImportLookaheadLinear(t *testing.T) {
	text := strings.Repeat("import ", 150_000)
	finishes(t, 20*time.Second, "jsRefs of 1 MB of `import `", func() { jsRefs(text, func(jsRef) bool { return true }) })
	src := `import type { A } from './a';
import x, * as y from './b';
import source s from './c.wasm';
import defer * as d from './d';
import typeof T from './e';
import z
  from './f';
`
	var specs []string
	jsRefs(src, func(r jsRef) bool {
		if !slices.Contains(specs, r.spec) { // the import and its from both name it
			specs = append(specs, r.spec)
		}
		return true
	})
	if got := strings.Join(specs, " "); got != "./a ./b ./c.wasm ./d ./e ./f" {
		t.Errorf("import forms read: %q", got)
	}
}

// review41 #16: each block comment of a tsconfig copied the rest of the file to find its end
// (a 1 MB file of `/**/`: 250,000 copies of up to 1 MB). The comment is found in place. Red
// without it (mutant workspace-jsonc-comment-copy).
func TestJSONCCommentsLinear(t *testing.T) {
	b := []byte("{" + strings.Repeat("/**/", 250_000) + `"a": 1}`)
	var out []byte
	finishes(t, 20*time.Second, "jsonc of 1 MB of block comments", func() { out = jsonc(b) })
	if string(out) != `{"a": 1}` {
		t.Errorf("jsonc = %q", out)
	}
}

// review41 #2: pyLoaders scanned a mention's whole line back and forth for each mention (229 KB
// of `a.exec;` on one line: 3.7 s; 8 MiB a file: hours, under the workspace lock). Lines are
// found from the newlines' offsets and judged once. What is judged is unchanged: a mention that
// may lead out still cuts, one after a method's dot is still a method. Red without it (mutant
// workspace-py-loader-per-mention).
func TestPyLoadersLinear(t *testing.T) {
	f := &follower{g: &gitGuard{ws: "/ws", wsReal: "/ws", runBy: map[string]string{}}}
	text := strings.Repeat("a.exec;", 150_000) + "\n"
	finishes(t, 20*time.Second, "pyLoaders of 1 MB of `a.exec;` on one line", func() {
		f.pyLoaders(todoFile{"/ws/srv/main.py", "/ws/.mcp.json", 1}, "/ws/srv", text)
	})
	if f.g.runCut != "" || len(f.g.run) != 0 {
		t.Errorf("methods named exec judged as loaders: cut %q, run %v", f.g.runCut, f.g.run)
	}
	var chain strings.Builder // each line judged, each name a base of the one before
	chain.WriteString("B0 = os.path.dirname(__file__)\n")
	for i := 1; i < 40_000; i++ {
		fmt.Fprintf(&chain, "B%d = B%d\nexec(B%d)\n", i, i-1, i)
	}
	f = &follower{g: &gitGuard{ws: "/ws", wsReal: "/ws", runBy: map[string]string{}}}
	finishes(t, 20*time.Second, "pyLoaders of 40,000 loaders each on a base of the one before", func() {
		f.pyLoaders(todoFile{"/ws/srv/main.py", "/ws/.mcp.json", 1}, "/ws/srv", chain.String())
	})
	for _, c := range []struct{ text, cut, run string }{
		{"import importlib, runpy\nx = 1; exec(code)\n", "", "/ws/srv"},
		{"x = 1; exec(code); sys.path.insert(0, '..')\n", "uses exec", ""},
		{"exec(code)\nexec(open('../p.py').read())\n", "uses exec", "/ws/srv"},
		{"import importlib\nx.exec(1); y.compile(2)\n", "", ""},
	} {
		f := &follower{g: &gitGuard{ws: "/ws", wsReal: "/ws", runBy: map[string]string{}}}
		f.pyLoaders(todoFile{"/ws/srv/main.py", "/ws/.mcp.json", 1}, "/ws/srv", c.text)
		if !strings.Contains(f.g.runCut, c.cut) || c.cut == "" && f.g.runCut != "" || strings.Join(f.g.run, " ") != c.run {
			t.Errorf("%q: cut %q (want one with %q), run %v (want %q)", c.text, f.g.runCut, c.cut, f.g.run, c.run)
		}
	}
}

// review41 #7: mise() joined a multi-line value's lines so far and judged the whole again after
// each line (a 50 KB mise.toml whose `_.file = [` never closes: 86 s a commit). Each line is
// judged once; where a value ends is unchanged. Red without it (mutant
// workspace-mise-value-quadratic).
func TestMiseMultiLineValuesLinear(t *testing.T) {
	f := &follower{g: &gitGuard{ws: "/ws", wsReal: "/ws", runBy: map[string]string{}}}
	open := "[settings]\nx = [\n" + strings.Repeat("1, # ]\n", 150_000)
	finishes(t, 20*time.Second, "mise of 1 MB of an array that never closes", func() { f.mise("/ws/mise.toml", "/ws", open) })
	str := "[settings]\nx = \"\"\"\n" + strings.Repeat("a line of a script\n", 50_000)
	finishes(t, 20*time.Second, "mise of 1 MB of a multi-line string that never closes", func() { f.mise("/ws/mise.toml", "/ws", str) })
	for _, c := range []struct {
		lines   []string
		i, want int
	}{
		{[]string{"x = [", "'a',", "]", "y = 1"}, 0, 2},
		{[]string{"x = [ # [", "{a = [1]},", "] # ]", "y = 1"}, 0, 2},
		{[]string{"x = 1", "y = ["}, 0, 0},
		{[]string{"x = [", "1,"}, 0, 1},
	} {
		depth := bracketDepth(c.lines[c.i])
		end := miseValueEnd(c.lines, c.i, func(l string) bool { depth += bracketDepth(l); return depth <= 0 }, depth <= 0)
		if end != c.want {
			t.Errorf("%q: the value ends at line %d, want %d", c.lines, end, c.want)
		}
	}
}
