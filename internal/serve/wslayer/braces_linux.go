package wslayer

import (
	"fmt"
	"strconv"
	"strings"
)

// braceExpand is bash's brace expansion of w: {a,b} lists and {x..y} sequences (letters or
// integers), nested or several; a `${…}` is a parameter's, left alone, as bash leaves it. It
// gives at most limit words, the first ones bash gives, and ok false when bash gives more or the
// expansion's work passes limit bytes per byte of w (a hostile word's nesting): the cost stays
// per byte of the config or text read. One expander serves a config's command lines (their
// scripts) and a shell text's setter names.
func braceExpand(w string, limit int) ([]string, bool) {
	work := limit*len(w) + 4096
	return braceFrom(w, 0, limit, &work)
}

// braceFrom expands w's groups from w[from] on (those before it are none), charging work for
// every byte scanned or built.
func braceFrom(w string, from, limit int, work *int) ([]string, bool) {
	if limit <= 0 {
		return nil, false
	}
	for i := from; i < len(w); i++ {
		if w[i] != '{' {
			continue
		}
		alts, end := braceGroup(w, i)
		if *work -= end - i + 1; *work < 0 {
			return nil, false
		}
		if i > 0 && w[i-1] == '$' {
			i = end // ${…}
			continue
		}
		if alts == nil {
			continue
		}
		var out []string
		for _, a := range alts {
			next := w[:i] + a + w[end+1:]
			if *work -= len(next); *work < 0 {
				return out, false
			}
			rest, ok := braceFrom(next, i, limit-len(out), work)
			out = append(out, rest...)
			if !ok {
				return out, false
			}
		}
		return out, true
	}
	return []string{w}, true
}

// braceGroup reads the brace group opening at w[i]: its alternatives (nil when it is no
// expansion: no top-level comma, no sequence) and the index of its closing brace.
func braceGroup(w string, i int) ([]string, int) {
	depth, start := 0, i+1
	var alts []string
	for j := i; j < len(w); j++ {
		switch w[j] {
		case '{':
			depth++
		case ',':
			if depth == 1 {
				alts = append(alts, w[start:j])
				start = j + 1
			}
		case '}':
			if depth--; depth > 0 {
				continue
			}
			if alts != nil {
				return append(alts, w[start:j]), j
			}
			return braceSequence(w[i+1 : j]), j
		}
	}
	return nil, len(w)
}

// braceSequence is {x..y[..step]}'s words as bash gives them, in order from x (the first is
// the one a command line runs), integers zero-padded when x or y is, at most maxBraceWords+1
// (the caller's limit sees more); nil when it is none.
func braceSequence(s string) []string {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return nil
	}
	b, c, _ := strings.Cut(b, "..")
	step := 1
	if c != "" {
		n, err := strconv.Atoi(c)
		if err != nil {
			return nil
		}
		step = max(n, -n, 1)
	}
	x, errA := strconv.Atoi(a)
	y, errB := strconv.Atoi(b)
	letters := errA != nil || errB != nil
	if letters {
		if len(a) != 1 || len(b) != 1 || !isLetter(a[0]) || !isLetter(b[0]) {
			return nil
		}
		x, y = int(a[0]), int(b[0])
	}
	width := 0
	if !letters && (zeroPadded(a) || zeroPadded(b)) {
		width = max(len(a), len(b))
	}
	if x > y {
		step = -step
	}
	var out []string
	for v := x; (step > 0 && v <= y || step < 0 && v >= y) && len(out) <= maxBraceWords; v += step {
		if letters {
			out = append(out, string(rune(v)))
		} else {
			out = append(out, fmt.Sprintf("%0*d", width, v))
		}
	}
	return out
}

// zeroPadded is whether bash pads a sequence bound's terms: it starts with 0 (or -0) and is longer.
func zeroPadded(n string) bool {
	n = strings.TrimPrefix(n, "-")
	return len(n) > 1 && n[0] == '0'
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
