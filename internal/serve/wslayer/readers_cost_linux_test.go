package wslayer

import (
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
