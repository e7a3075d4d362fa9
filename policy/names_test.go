package policy

import (
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// The name checks are the patterns they replaced, on every edge and on random strings drawn
// from the patterns' own alphabet and its neighbours.
func TestNameChecksMatchTheirPatterns(t *testing.T) {
	checks := []struct {
		name string
		re   *regexp.Regexp
		f    func(string) bool
	}{
		{"ValidName", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$`), ValidName},
		{"ValidCommandName", regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$`), ValidCommandName},
		{"ValidEnvName", regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`), ValidEnvName},
		{"ValidSHA256", regexp.MustCompile(`^[0-9a-f]{64}$`), ValidSHA256},
		{"ValidUIDGID", regexp.MustCompile(`^[0-9]+:[0-9]+$`), ValidUIDGID},
	}
	fixed := []string{"", "a", "A", "0", "_", "-", ".", "+", ":", "a\n", "\na", "0:0", "0:", ":0", "1:2:3", "10:20",
		"a-b.c_d+e", strings.Repeat("a", 64), strings.Repeat("a", 65), strings.Repeat("f", 64), strings.Repeat("F", 64),
		strings.Repeat("0", 63), "é", "a b", "_x", "x_", "9x", "x9"}
	const alphabet = "aZ09_.-+:\n é/fF"
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		n := rng.IntN(70)
		var b strings.Builder
		for range n {
			b.WriteByte(alphabet[rng.IntN(len(alphabet))])
		}
		fixed = append(fixed, b.String())
	}
	for _, c := range checks {
		for _, s := range fixed {
			if got, want := c.f(s), c.re.MatchString(s); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, s, got, want)
			}
		}
	}
}

// A glob is compiled once: the same pattern gives the same expression, and a bad one its error
// every time (errors are not cached).
func TestCompileGlobOnce(t *testing.T) {
	a, err := CompileGlob("--exec*")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := CompileGlob("--exec*"); a != b {
		t.Error("the same pattern was compiled twice")
	}
	if !a.MatchString("--exec=x") || a.MatchString("-exec") {
		t.Errorf("--exec* compiled to %s", a)
	}
	for range 2 {
		if _, err := CompileGlob("[abc"); err == nil {
			t.Error("an unbalanced class compiled")
		}
	}
}

// A pattern's non-ASCII names match themselves (protect patterns, deny_args, home links'
// patterns in the docker scheme): each byte was made a rune, so café compiled to cafÃ© and
// matched nothing (review41 #6; mutant policy-glob-bytes-as-runes).
func TestCompileGlobNonASCII(t *testing.T) {
	for _, c := range []struct{ pat, in string }{
		{"café/*", "café/menu.txt"}, {"*/naïve.json", "x/naïve.json"}, {"日本?", "日本語"}, {"[é]x", "éx"},
	} {
		re, err := CompileGlob(c.pat)
		if err != nil {
			t.Fatalf("%q: %v", c.pat, err)
		}
		if !re.MatchString(c.in) {
			t.Errorf("%q does not match %q (compiled %s)", c.pat, c.in, re)
		}
	}
}
