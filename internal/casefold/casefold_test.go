package casefold

import (
	"testing"
	"unicode"
)

func TestRuneIsTheLeastOfItsOrbit(t *testing.T) {
	for _, c := range []struct{ a, b string }{
		{"agents.md", "AGENTS.MD"}, {".huſky", ".HUSKY"}, {"\u212aey", "KEY"}, {"ǅ", "Ǆ"}, {"é", "É"},
	} {
		if String(c.a) != String(c.b) {
			t.Errorf("%q and %q fold apart: %q, %q", c.a, c.b, String(c.a), String(c.b))
		}
	}
	for _, c := range []struct{ a, b string }{{"a", "b"}, {"ss", "ß"}, {"i", "ı"}} {
		if String(c.a) == String(c.b) {
			t.Errorf("%q and %q fold together (simple folding keeps them apart)", c.a, c.b)
		}
	}
	// Every rune's class is in its orbit and is the same for every member of the orbit.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		f := Rune(r)
		if f > r {
			t.Fatalf("Rune(%U) = %U, above it", r, f)
		}
		if g := unicode.SimpleFold(r); g != r && Rune(g) != f {
			t.Fatalf("%U and %U, one orbit, fold to %U and %U", r, g, f, Rune(g))
		}
	}
}
